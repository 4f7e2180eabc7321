-- One access model for every surface of `cairn serve` (issue 15): browser sign-ins kept on the server, who did what,
-- and whether a run may run `script` nodes.

-- A browser's sign-in: the cookie holds a random secret, the row its SHA-256 and the token it signed in with, so
-- revoking the token ends every sign-in made with it at once, and the token itself never leaves the server.
CREATE TABLE web_signins (
    secret_hash TEXT PRIMARY KEY,
    token_id TEXT NOT NULL REFERENCES work_tokens (id),
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX web_signins_by_token ON web_signins (token_id);

-- Who did what: decisions, cancels, retries, starts, workflow writes, sign-ins, token changes.
CREATE TABLE audit_events (
    id TEXT PRIMARY KEY,
    ts BIGINT NOT NULL,
    principal_id TEXT NOT NULL,
    principal TEXT NOT NULL,
    via TEXT NOT NULL,
    action TEXT NOT NULL,
    subject TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_events_by_subject ON audit_events (subject, ts);

-- Who started a run, and whether its starter could let it run scripts (`roscoe:exec`); children inherit both.
ALTER TABLE workflow_runs ADD COLUMN started_by TEXT;
ALTER TABLE workflow_runs ADD COLUMN exec_allowed BIGINT NOT NULL DEFAULT 1;
