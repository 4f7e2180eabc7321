#!/usr/bin/env bash
# Installs Gemini CLI from npm under target/gemini-cli for the real-host tests (crates/cairn/tests/hosts/gemini.rs),
# which run it offline against a local stand-in for the Generative Language API (Node.js 20, as the machine has).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=0.61.0
dir=target/gemini-cli
if [[ $("$dir/node_modules/.bin/gemini" --version 2>/dev/null) != "$version" ]]; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --silent "@google/gemini-cli@$version"
fi
"$dir/node_modules/.bin/gemini" --version
