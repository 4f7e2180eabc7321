-- The server's own model calls (issue 18): who runs a run's AI steps (`host` hands them back, `server` calls model
-- providers), the run tree's budget (JSON `{ usd?, tokens? }`, kept on the root), and usage beyond the cost columns
-- (JSON: cache tokens, calls by billing, calls whose price is unknown; per node run also each model call made).
ALTER TABLE workflow_runs ADD COLUMN execution TEXT NOT NULL DEFAULT 'host';
ALTER TABLE workflow_runs ADD COLUMN budget TEXT;
ALTER TABLE workflow_runs ADD COLUMN usage TEXT;
ALTER TABLE node_runs ADD COLUMN usage TEXT;
