#!/usr/bin/env bash
# Fuzzes cairn serve's REST API from its generated OpenAPI document (/api/openapi.json) with schemathesis and fails
# on any server error (5xx). Installs schemathesis into a venv under target/; runs a bounded number of examples.
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
token=$(CAIRN_HOME="$work/home" "$cairn" work token create --principal fuzz --kind agent \
  --scopes mcp:read,mcp:write,decisions:read,decisions:write | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')

# From the scratch folder, so schemathesis's caches stay out of the repository.
st=$PWD/$venv/bin/st
cd "$work"
"$st" run "$base/api/openapi.json" --url "$base" \
  --checks not_a_server_error --max-examples "${SCHEMATHESIS_EXAMPLES:-25}" --workers 2 \
  -H "Authorization: Bearer $token" --no-color
kill -0 "$server" # the server is still up
