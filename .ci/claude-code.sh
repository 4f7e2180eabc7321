#!/usr/bin/env bash
# Installs what the real-host tests (crates/cairn/tests/hosts/) need: Claude Code from npm, and the Node.js 22 its
# wrapper wants, both under target/claude-code (npm is the only registry needed; the CLI's native binary comes with
# the package). The tests run it offline against a local stand-in for the Anthropic API.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=2.1.197
dir=target/claude-code
if [[ $("$dir/node_modules/.bin/claude" --version 2>/dev/null) != "$version (Claude Code)" ]]; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --silent node@22 "@anthropic-ai/claude-code@$version"
fi
PATH="$PWD/$dir/node_modules/.bin:$PATH" claude --version
