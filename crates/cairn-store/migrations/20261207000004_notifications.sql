-- Outbound run notifications (an outbox): one row per event and configured target, inserted in the transaction of
-- the step that moved the run, then POSTed by whichever server of the database claims it first. A delivery's `id`
-- is its idempotency key (the same on every retry); `attempts` is the claim's compare-and-set: a server claims the
-- next attempt by raising it and pushing `next_at` past its send timeout, so two servers never send one attempt.
-- `status` is `pending`, `delivered` or `given_up`; `body` is the exact text POSTed (JSON); `secret_env` names the
-- server's environment variable holding the signing secret, never the secret itself.
CREATE TABLE run_notifications (
    id TEXT PRIMARY KEY NOT NULL,
    run_id TEXT NOT NULL,
    root_run_id TEXT NOT NULL,
    event TEXT NOT NULL,
    url TEXT NOT NULL,
    secret_env TEXT,
    body TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    next_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    ended_at BIGINT
);
CREATE INDEX run_notifications_due ON run_notifications (status, next_at);
CREATE INDEX run_notifications_by_root ON run_notifications (root_run_id);

-- Every attempt at a delivery: when, and the HTTP status it got or the error that stopped it.
CREATE TABLE run_notification_attempts (
    notification_id TEXT NOT NULL,
    attempt BIGINT NOT NULL,
    at BIGINT NOT NULL,
    http_status BIGINT,
    error TEXT,
    PRIMARY KEY (notification_id, attempt)
);
