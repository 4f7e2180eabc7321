#!/usr/bin/env bash
# Create (idempotently) the Python venv used by the DeepWork comparison and benchmark scripts.
#
#   benches/deepwork/setup.sh            -> <repo>/.venv-dw  (gitignored by /.venv*)
#
# It holds the real DeepWork 0.14.0 server (the reference implementation cairn is compared with)
# plus the pinned FastMCP / mcp versions the behavioural spec was recorded with. The `mcp` package
# also provides the stdio client used by compare.py and bench.py.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="${VENV_DW:-$REPO/.venv-dw}"
PY="${PYTHON:-python3}"
PINS=(deepwork==0.14.0 fastmcp==3.2.0 mcp==1.26.0)

if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi

# Skip pip entirely when every pin is already installed.
if "$VENV/bin/python" - "${PINS[@]}" <<'PYEOF' 2>/dev/null; then
import sys
from importlib.metadata import version
for pin in sys.argv[1:]:
    name, want = pin.split("==")
    if version(name) != want:
        sys.exit(1)
PYEOF
    echo "setup.sh: $VENV already has ${PINS[*]}"
else
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PINS[@]}"
    echo "setup.sh: installed ${PINS[*]} into $VENV"
fi
"$VENV/bin/deepwork" --version
