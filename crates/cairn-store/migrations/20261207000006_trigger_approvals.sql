-- Which version of a repo workflow someone holding roscoe:exec approved for runs that nobody starts by hand (its
-- schedule and webhook triggers): such a run may execute the workflow's scripts only while the file's text still
-- hashes to `text_sha256`. One row per workflow; a new approval replaces the old.
CREATE TABLE trigger_approvals (
    project_id TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    approved_by TEXT NOT NULL,
    approved_at BIGINT NOT NULL,
    PRIMARY KEY (project_id, workflow_id)
);
