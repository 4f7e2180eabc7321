#!/usr/bin/env bash
# Fuzzes cairn serve's REST API from its generated OpenAPI document (/api/openapi.json) with schemathesis, twice: with a
# token of every scope (no server error, 5xx, and no operation that answers only 401/403), then with a read-only token
# (no server error, and every write refused: .ci/schemathesis_read_only.py). Installs schemathesis into a venv under
# target/; runs a bounded number of examples.
# Usage: bash .ci/schemathesis.sh [path to the cairn binary] (default target/debug/cairn).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cairn=${1:-target/debug/cairn}
venv=target/schemathesis-venv
if [[ ! -x $venv/bin/st ]]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet 'schemathesis>=4,<5'
fi

work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/home/workflows"
printf 'name: decide\ninitial: ask\nnodes:\n  ask:\n    type: human\n    config: { prompt: Go? }\n    transitions: { ship: $end }\n' \
  > "$work/home/workflows/decide.yaml"
# No rate limit: the fuzzer sends far more requests from one token than the default lets through, and each 429 would
# be a request that never reached a handler.
CAIRN_HOME="$work/home" "$cairn" serve --addr 127.0.0.1:0 --rate-limit 0 2> "$work/serve.log" &
server=$!
for _ in $(seq 1 100); do
  grep -q 'listening on' "$work/serve.log" && break
  sleep 0.1
done
base=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$work/serve.log" | head -n1)
[[ -n $base ]] || { cat "$work/serve.log"; exit 1; }
token() {
  CAIRN_HOME="$work/home" "$cairn" work token create --principal "$1" --kind agent --scopes "$2" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])'
}
every=$(token fuzz roscoe:exec,roscoe:write,deepwork:write,mcp:write,decisions:write,metrics:read,admin)
reader=$(token reader roscoe:read,deepwork:read,mcp:read,decisions:read,metrics:read)

# From the scratch folder, so schemathesis's caches stay out of the repository.
st=$PWD/$venv/bin/st
hooks=$PWD/.ci
cd "$work"
fuzz() {
  "$st" run "$base/api/openapi.json" --url "$base" --max-examples "${SCHEMATHESIS_EXAMPLES:-25}" --workers 2 \
    --no-color "$@"
}
echo "== with a token of every scope: no operation answers 5xx, and every one is reached"
fuzz --checks not_a_server_error -H "Authorization: Bearer $every" | tee "$work/every.txt"
if grep -q 'returned only 401/403' "$work/every.txt"; then
  echo "some operations answered a token of every scope only 401/403" >&2
  exit 1
fi
echo "== with a read-only token: every write is refused (403), nothing answers 5xx"
PYTHONPATH=$hooks SCHEMATHESIS_HOOKS=schemathesis_read_only \
  fuzz --checks not_a_server_error,writes_refused -H "Authorization: Bearer $reader"
kill -0 "$server" # the server is still up
