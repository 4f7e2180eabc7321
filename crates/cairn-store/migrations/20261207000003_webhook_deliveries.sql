-- Deliveries of the inbound webhooks that start runs: one row per delivery id a hook (`<project id or global>/
-- <workflow id>`) accepted. The primary key is the claim: of two requests (or two servers) with the same delivery,
-- exactly one inserts the row and starts the run; the other reads `run_id` and starts nothing. `run_id` is NULL
-- while the run is being created. `expires_at` (epoch ms) is when the row may go: a delivery signed with a
-- timestamp cannot be replayed once the timestamp is stale, one without (GitHub's) has NULL and is kept.
CREATE TABLE webhook_deliveries (
    hook TEXT NOT NULL,
    delivery_id TEXT NOT NULL,
    run_id TEXT,
    claimed_at BIGINT NOT NULL,
    expires_at BIGINT,
    PRIMARY KEY (hook, delivery_id)
);
CREATE INDEX webhook_deliveries_by_expiry ON webhook_deliveries (expires_at);
