//! The unit tests' databases: a fresh SQLite file in a temporary folder, or — when `CAIRN_TEST_POSTGRES_URL` names
//! a PostgreSQL server's admin URL (`.ci/postgres.sh` prints one) — a fresh Postgres database of the test's own,
//! created and dropped through that URL. So every store test runs on whichever backend the environment picks.
//! [`run_row`] is the run the tests put in them, changed where a test needs.

use std::sync::atomic::{AtomicU32, Ordering};

use sqlx::{Connection, Executor};

use crate::Store;
use crate::runs::{NodeRunRow, RunRow};

/// The environment variable holding the Postgres admin URL; unset means SQLite.
const POSTGRES_ENV: &str = "CAIRN_TEST_POSTGRES_URL";

/// A migrated store on a database of its own, removed when this is dropped.
pub(crate) struct TestStore {
    pub(crate) store: Store,
    /// The URL the store was opened with (to open it again).
    pub(crate) url: String,
    _dir: tempfile::TempDir,
    postgres: Option<(String, String)>,
}

impl TestStore {
    /// A new database, migrated: Postgres when `CAIRN_TEST_POSTGRES_URL` is set, else SQLite.
    pub(crate) async fn new() -> TestStore {
        let test = TestStore::unmigrated().await;
        test.store.migrate().await.unwrap();
        test
    }

    /// A new, empty database (no migration applied yet).
    pub(crate) async fn unmigrated() -> TestStore {
        let dir = tempfile::tempdir().unwrap();
        let (url, postgres) = match std::env::var(POSTGRES_ENV).ok().filter(|v| !v.is_empty()) {
            None => (Store::default_url(dir.path()), None),
            Some(admin) => {
                static COUNTER: AtomicU32 = AtomicU32::new(0);
                let name = format!("cairn_unit_{}_{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
                admin_statement(&admin, &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await;
                admin_statement(&admin, &format!("CREATE DATABASE {name}")).await;
                let base = admin.rsplit_once('/').map_or(admin.as_str(), |(base, _)| base);
                (format!("{base}/{name}"), Some((admin.clone(), name)))
            }
        };
        let store = Store::connect(&url).await.unwrap();
        TestStore { store, url, _dir: dir, postgres }
    }
}

impl Drop for TestStore {
    fn drop(&mut self) {
        let Some((admin, name)) = self.postgres.take() else { return };
        // Drop runs inside the test's runtime, which cannot be blocked on: use a runtime of its own on a thread.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(admin_statement(&admin, &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")));
        });
        let _ = dropped.join();
    }
}

/// Runs `sql` on the admin database, panicking with the server's message on failure.
async fn admin_statement(admin_url: &str, sql: &str) {
    sqlx::any::install_default_drivers();
    let mut connection = sqlx::AnyConnection::connect(admin_url)
        .await
        .unwrap_or_else(|e| panic!("connect to {POSTGRES_ENV} ({admin_url}): {e}"));
    connection.execute(sqlx::AssertSqlSafe(sql.to_owned())).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let _ = connection.close().await;
}

/// A top-level run of workflow `wf` in `project`, `running` since `started_at`, at no cost; a test changes what it
/// needs.
pub(crate) fn run_row(id: &str, project: &str, started_at: i64) -> RunRow {
    RunRow {
        id: id.into(),
        project_id: project.into(),
        project_root: None,
        root_run_id: id.into(),
        parent_run_id: None,
        parent_node_run_id: None,
        depth: 0,
        workflow_id: "wf".into(),
        workflow_name: "wf".into(),
        workflow_description: None,
        workflow_source: "global".into(),
        workflow_path: "wf.yaml".into(),
        workflow_dir: "wf".into(),
        workflow_snapshot: "{}".into(),
        source: "mcp".into(),
        kind: "user".into(),
        status: "running".into(),
        current_node_id: None,
        pending_step: None,
        awaiting_child_run_id: None,
        input: "{}".into(),
        context: "{}".into(),
        output: None,
        error: None,
        error_code: None,
        host: None,
        owner_pid: None,
        lease_expires_at: None,
        attempt: 1,
        total_cost_usd: 0.0,
        metered_cost_usd: 0.0,
        subscription_equiv_cost_usd: 0.0,
        billing_mode: "none".into(),
        input_tokens: 0,
        output_tokens: 0,
        started_at,
        completed_at: None,
        updated_at: started_at,
        started_by: None,
        exec_allowed: true,
        execution: "host".into(),
        budget: None,
        usage: None,
        version: 0,
    }
}

/// Node run `id` (visit 1, seq `seq`) of run `run_id`: a paused `ai_agent` step at node `a`; a test changes what it
/// needs.
pub(crate) fn node_row(id: &str, run_id: &str, seq: i64) -> NodeRunRow {
    NodeRunRow {
        id: id.into(),
        run_id: run_id.into(),
        parent_node_run_id: None,
        seq,
        node_id: "a".into(),
        node_type: "ai_agent".into(),
        status: "paused".into(),
        iteration: 1,
        attempts: 0,
        phase: None,
        phase_state: None,
        model: None,
        input: None,
        output: None,
        error: None,
        event: None,
        warnings: None,
        child_run_id: None,
        started_at: 1,
        completed_at: None,
        duration_ms: None,
        cost_usd: None,
        input_tokens: None,
        output_tokens: None,
        usage: None,
    }
}
