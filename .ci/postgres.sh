#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for the tests and prints the admin URL they read from CAIRN_TEST_POSTGRES_URL.
# Installs Debian's `postgresql` package when the server binaries are missing. The cluster lives in a temporary folder
# owned by the `postgres` user (the server refuses to run as root), listens on 127.0.0.1:${CAIRN_PG_PORT:-55432} and
# trusts local connections: it is for tests only.
#
#   export CAIRN_TEST_POSTGRES_URL=$(bash .ci/postgres.sh)
#   bash .ci/postgres.sh stop    # stops the server this script started on that port and deletes its folder
set -euo pipefail

port=${CAIRN_PG_PORT:-55432}
# The folder of the server this script started on $port, for `stop`.
state=/tmp/cairn-pg-${port}.dir
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)

run_as_postgres() {
  if [[ $(id -u) == 0 ]]; then
    su postgres -s /bin/bash -c "$*"
  else
    bash -c "$*"
  fi
}

if [[ ${1:-} == stop ]]; then
  [[ -f $state ]] || exit 0
  dir=$(cat "$state")
  [[ -n $bin ]] && run_as_postgres "'$bin/pg_ctl' -D '$dir/data' -m fast -w stop" >/dev/null 2>&1 || true
  rm -rf "$dir" "$state"
  exit 0
fi

if [[ -z $bin || ! -x $bin/postgres ]]; then
  echo "installing postgresql from Debian's packages" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 || true
  apt-get install -y -qq --no-install-recommends postgresql >&2
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
fi

url="postgres://postgres@127.0.0.1:${port}/postgres"
if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then
  echo "$url"
  exit 0
fi

dir=$(mktemp -d /tmp/cairn-pg.XXXXXX)
echo "$dir" >"$state"
[[ $(id -u) == 0 ]] && chown postgres "$dir"
run_as_postgres "'$bin/initdb' -D '$dir/data' -A trust -U postgres" >"$dir/initdb.log" 2>&1 || {
  cat "$dir/initdb.log" >&2
  exit 1
}
# Tests start many servers, each with a pool: allow plenty of connections.
run_as_postgres "'$bin/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w -o \"-p $port -k '$dir' -c listen_addresses=127.0.0.1 -c max_connections=500\" start" >&2 || {
  cat "$dir/server.log" >&2
  exit 1
}
echo "$url"
