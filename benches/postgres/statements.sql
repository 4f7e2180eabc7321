-- An item change statement by statement (claim.sh). The swap expects the version the statement itself reads, as
-- the store's expects the version its read found.
\set n random(1, 20000)
BEGIN;
UPDATE work_items SET state = 'claimed', claimant = 'w', updated_at = 1, version = version + 1
 WHERE id = 'wi_' || CAST(:n AS text) AND account_id = 'acc'
   AND version = (SELECT version FROM work_items WHERE id = 'wi_' || CAST(:n AS text));
INSERT INTO work_events (item_id, seq, at, claimant, kind, data)
 SELECT 'wi_' || CAST(:n AS text), (SELECT COALESCE(MAX(seq), 0) + 1 FROM work_events WHERE item_id = 'wi_' || CAST(:n AS text)),
        1, 'w', 'claimed', '{}';
SELECT pg_notify('cairn_changes', 'item' || chr(58) || 'wi_' || CAST(:n AS text))::text;
COMMIT;
