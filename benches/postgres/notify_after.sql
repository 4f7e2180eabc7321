-- The one statement of one_statement.sql, then its notification as a transaction of its own: one per change,
-- which is what the store's outbox sends when changes come one at a time (claim.sh).
\set n random(1, 20000)
WITH s0 AS (UPDATE work_items SET state = 'claimed', claimant = 'w', updated_at = 1, version = version + 1
             WHERE id = 'wi_' || CAST(:n AS text) AND account_id = 'acc'
               AND version = (SELECT version FROM work_items WHERE id = 'wi_' || CAST(:n AS text)) RETURNING 1),
     s1 AS (INSERT INTO work_events (item_id, seq, at, claimant, kind, data)
             SELECT 'wi_' || CAST(:n AS text),
                    (SELECT COALESCE(MAX(seq), 0) + 1 FROM work_events WHERE item_id = 'wi_' || CAST(:n AS text)),
                    1, 'w', 'claimed', '{}'
             WHERE EXISTS (SELECT 1 FROM s0) RETURNING 1)
SELECT (SELECT count(*) FROM s0), (SELECT count(*) FROM s1);
SELECT pg_notify('cairn_changes', 'item' || chr(58) || 'wi_' || CAST(:n AS text))::text;
