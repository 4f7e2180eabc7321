#!/usr/bin/env bash
# Installs the Codex CLI from npm under target/codex for the real-host tests (crates/cairn/tests/hosts/codex.rs),
# which run it offline against a local stand-in for the Responses API. The package brings its native binary.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=0.169.0
dir=target/codex
if [[ $("$dir/node_modules/.bin/codex" --version 2>/dev/null) != "codex-cli $version" ]]; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --silent "@openai/codex@$version"
fi
"$dir/node_modules/.bin/codex" --version
