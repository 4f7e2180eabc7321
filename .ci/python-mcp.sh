#!/usr/bin/env bash
# Installs the official Python MCP SDK (PyPI `mcp`) into a venv under target/mcp-venv, for the tests that drive cairn
# through it as Python hosts do (crates/cairn/tests/roscoe/progress.rs: progress notifications).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=target/mcp-venv
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import mcp' 2> /dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet 'mcp>=1.10,<3'
fi
"$venv/bin/python" -c 'import importlib.metadata as m; print("python mcp", m.version("mcp"))'
