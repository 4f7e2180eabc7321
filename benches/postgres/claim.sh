#!/usr/bin/env bash
# The PostgreSQL side of a claim, without cairn: pgbench runs an item change the ways the store has sent it, on tables
# of the shape of work_items and work_events, alternately, and prints each run's transactions per second:
#
#   statements     BEGIN, the compare-and-swap UPDATE, the event INSERT … SELECT, pg_notify, COMMIT
#   notify_inside  one statement of data-modifying WITH queries (Batch::one_snapshot), pg_notify written in
#   one_statement  that statement without the notification, which the store now sends after the commit, gathered
#   notify_after   that statement, then a pg_notify of its own for each change (the most the notifications cost)
#
#   bash benches/postgres/claim.sh ADMIN_URL [ROUNDS] [SECONDS]
#
# ADMIN_URL is a superuser URL such as `bash .ci/postgres.sh` prints; a database `cairn_claim_bench` is made and
# dropped. 8 clients on 20,000 items, prepared statements.
set -euo pipefail
admin=${1:?usage: claim.sh ADMIN_URL [ROUNDS] [SECONDS]}
rounds=${2:-3}
seconds=${3:-8}
here=$(cd "$(dirname "$0")" && pwd)
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
psql=$(command -v psql || echo "$bin/psql")
pgbench=$(command -v pgbench || echo "$bin/pgbench")
db=cairn_claim_bench
url=${admin%/*}/$db
export PGOPTIONS="-c client_min_messages=warning"

scripts=$(mktemp -d)
trap '"$psql" -q "$admin" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; rm -rf "$scripts"' EXIT
"$psql" -q "$admin" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
"$psql" -q "$url" <<'SQL'
CREATE TABLE work_items (id TEXT PRIMARY KEY, account_id TEXT NOT NULL, state TEXT NOT NULL, claimant TEXT,
                         updated_at BIGINT NOT NULL, version BIGINT NOT NULL);
CREATE TABLE work_events (item_id TEXT NOT NULL REFERENCES work_items (id), seq BIGINT NOT NULL, at BIGINT NOT NULL,
                          claimant TEXT NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (item_id, seq));
INSERT INTO work_items SELECT 'wi_' || g, 'acc', 'open', NULL, 0, 0 FROM generate_series(1, 20000) g;
INSERT INTO work_events SELECT 'wi_' || g, 1, 0, 'seed', 'created', '{}' FROM generate_series(1, 20000) g;
SQL
# notify_after: one_statement.sql, then a notification of its own per change.
cp "$here"/*.sql "$scripts"/
{ cat "$here/one_statement.sql"
  echo "SELECT pg_notify('cairn_changes', 'item' || chr(58) || 'wi_' || CAST(:n AS text));"
} >"$scripts/notify_after.sql"
for round in $(seq 1 "$rounds"); do
  for way in statements notify_inside one_statement notify_after; do
    tps=$("$pgbench" -n -M prepared -c 8 -j 2 -T "$seconds" -f "$scripts/$way.sql" "$url" | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
    echo "round $round, $way: $tps transactions/s"
  done
done
