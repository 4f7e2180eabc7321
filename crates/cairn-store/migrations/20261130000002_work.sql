-- The work surface: accounts, principals, memberships and tokens; decision spaces and documents (every version
-- kept); work items with their append-only event log; merged / rolled evidence; server settings.
-- Times are epoch milliseconds, JSON is TEXT, ids are prefixed text ("acc_…", "wi_…").

CREATE TABLE work_accounts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    default_repository TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);

CREATE TABLE work_principals (
    id TEXT PRIMARY KEY,
    home_account_id TEXT NOT NULL REFERENCES work_accounts (id),
    kind TEXT NOT NULL,
    display_name TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX work_principals_by_name ON work_principals (home_account_id, display_name, kind);

CREATE TABLE work_memberships (
    account_id TEXT NOT NULL REFERENCES work_accounts (id),
    principal_id TEXT NOT NULL REFERENCES work_principals (id),
    role TEXT NOT NULL,
    PRIMARY KEY (account_id, principal_id)
);

CREATE TABLE work_tokens (
    id TEXT PRIMARY KEY,
    principal_id TEXT NOT NULL REFERENCES work_principals (id),
    secret_hash TEXT NOT NULL,
    scopes TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    revoked_at BIGINT,
    last_used_at BIGINT
);

CREATE TABLE work_settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE decision_spaces (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES work_accounts (id),
    name TEXT NOT NULL,
    name_key TEXT NOT NULL,
    description TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX decision_spaces_by_name ON decision_spaces (account_id, name_key);

CREATE TABLE decision_documents (
    id TEXT PRIMARY KEY,
    space_id TEXT NOT NULL REFERENCES decision_spaces (id),
    account_id TEXT NOT NULL REFERENCES work_accounts (id),
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    version BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    updated_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX decision_documents_by_change ON decision_documents (space_id, updated_at DESC, id DESC);

CREATE TABLE decision_document_versions (
    document_id TEXT NOT NULL REFERENCES decision_documents (id),
    version BIGINT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    author TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (document_id, version)
);

CREATE TABLE work_items (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES work_accounts (id),
    space_id TEXT NOT NULL REFERENCES decision_spaces (id),
    document_id TEXT NOT NULL,
    title TEXT NOT NULL,
    notes TEXT NOT NULL,
    links TEXT NOT NULL,
    state TEXT NOT NULL,
    claimant TEXT NOT NULL,
    claimant_key TEXT NOT NULL,
    claimant_kind TEXT NOT NULL,
    claimant_principal_id TEXT NOT NULL,
    claimed_at BIGINT,
    handoff TEXT,
    handoff_to_key TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    done_at BIGINT,
    done_by TEXT NOT NULL,
    version BIGINT NOT NULL
);
CREATE INDEX work_items_by_account ON work_items (account_id, updated_at DESC, id DESC);
CREATE INDEX work_items_by_space ON work_items (space_id, updated_at DESC, id DESC);
CREATE INDEX work_items_by_document ON work_items (document_id, updated_at DESC, id DESC);
CREATE INDEX work_items_by_claimant ON work_items (account_id, claimant_key, updated_at DESC, id DESC);

CREATE TABLE work_events (
    item_id TEXT NOT NULL REFERENCES work_items (id),
    seq BIGINT NOT NULL,
    at BIGINT NOT NULL,
    principal_id TEXT NOT NULL,
    claimant TEXT NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (item_id, seq)
);

CREATE TABLE work_evidence (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES work_accounts (id),
    kind TEXT NOT NULL,
    repository TEXT NOT NULL,
    repository_key TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    service TEXT NOT NULL,
    at BIGINT NOT NULL,
    recorded_by TEXT NOT NULL,
    recorded_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX work_evidence_one_roll ON work_evidence (account_id, repository_key, service, commit_sha)
    WHERE kind = 'rolled';
CREATE INDEX work_evidence_by_repository ON work_evidence (account_id, repository_key);

CREATE TABLE work_evidence_prs (
    evidence_id TEXT NOT NULL REFERENCES work_evidence (id),
    account_id TEXT NOT NULL,
    repository_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    number BIGINT NOT NULL,
    PRIMARY KEY (evidence_id, number)
);
CREATE UNIQUE INDEX work_evidence_one_merge ON work_evidence_prs (account_id, repository_key, number)
    WHERE kind = 'merged';
CREATE INDEX work_evidence_prs_by_number ON work_evidence_prs (account_id, repository_key, number);
