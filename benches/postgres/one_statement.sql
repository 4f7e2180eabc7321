-- An item change as one statement, as Batch::one_snapshot sends it (claim.sh); its notification goes after the
-- commit, gathered with others (claim.sh's notify_after sends one per change, the most it can cost).
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
