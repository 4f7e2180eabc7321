-- MCP sessions of clients older than protocol 2026-07-28 (they send Mcp-Session-Id), kept so that any `cairn serve`
-- node sharing the database can continue a session another node started. One row per session and endpoint; `state`
-- is the JSON of the client's `initialize` parameters. Times are epoch milliseconds.

CREATE TABLE mcp_sessions (
    endpoint TEXT NOT NULL,
    id TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    used_at BIGINT NOT NULL,
    PRIMARY KEY (endpoint, id)
);

CREATE INDEX mcp_sessions_used_at ON mcp_sessions (used_at);
