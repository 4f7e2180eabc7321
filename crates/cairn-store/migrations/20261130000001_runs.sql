-- Roscoe runs (spec §6.4): runs, their node runs and an append-only event log. Times are epoch milliseconds.

CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    root_path TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);

CREATE TABLE workflow_runs (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    project_root TEXT,
    root_run_id TEXT NOT NULL,
    parent_run_id TEXT,
    parent_node_run_id TEXT,
    depth BIGINT NOT NULL DEFAULT 0,
    workflow_id TEXT NOT NULL,
    workflow_name TEXT NOT NULL,
    workflow_description TEXT,
    workflow_source TEXT NOT NULL,
    workflow_path TEXT NOT NULL,
    workflow_dir TEXT NOT NULL,
    workflow_snapshot TEXT NOT NULL,
    source TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'user',
    status TEXT NOT NULL,
    current_node_id TEXT,
    pending_step TEXT,
    awaiting_child_run_id TEXT,
    input TEXT NOT NULL DEFAULT '{}',
    context TEXT NOT NULL DEFAULT '{}',
    output TEXT,
    error TEXT,
    error_code TEXT,
    host TEXT,
    owner_pid BIGINT,
    lease_expires_at BIGINT,
    attempt BIGINT NOT NULL DEFAULT 1,
    total_cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
    metered_cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
    subscription_equiv_cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
    billing_mode TEXT NOT NULL DEFAULT 'none',
    input_tokens BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    started_at BIGINT NOT NULL,
    completed_at BIGINT,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_project ON workflow_runs (project_id, kind, started_at DESC, id DESC);
CREATE INDEX runs_by_parent ON workflow_runs (parent_run_id);
CREATE INDEX runs_by_root ON workflow_runs (root_run_id);

CREATE TABLE node_runs (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
    parent_node_run_id TEXT,
    seq BIGINT NOT NULL,
    node_id TEXT NOT NULL,
    node_type TEXT NOT NULL,
    status TEXT NOT NULL,
    iteration BIGINT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    phase TEXT,
    phase_state TEXT,
    model TEXT,
    input TEXT,
    output TEXT,
    error TEXT,
    event TEXT,
    warnings TEXT,
    child_run_id TEXT,
    started_at BIGINT NOT NULL,
    completed_at BIGINT,
    duration_ms BIGINT,
    cost_usd DOUBLE PRECISION,
    input_tokens BIGINT,
    output_tokens BIGINT
);
CREATE INDEX node_runs_by_run ON node_runs (run_id, seq);

CREATE TABLE run_events (
    run_id TEXT NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    ts BIGINT NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
