//! Roscoe's tables (§6.4 of the roscoe spec): `workflow_runs`, `node_runs`, `run_events` and `projects`.
//!
//! Rows are plain structs whose JSON columns stay `String`s; what they mean is the roscoe crate's business. Every
//! function takes a connection first — a pooled one for reads, the connection of a [`Store::begin_write`]
//! transaction for changes — so a caller composes one transaction from several calls. A run changes only through
//! [`update_run`], a compare-and-swap on `version`: of two processes that loaded the same version, exactly one wins.
//! A change reads its run with [`lock_run`] (or its tree with [`lock_tree`]) inside the write transaction, so on
//! Postgres a concurrent change of the same run waits for this one and then reads its result, as on SQLite. Node
//! runs are `runs/nodes.rs`; durable timers `runs/timers.rs`; the outbox of run notifications
//! `runs/notifications.rs`; what running scripts printed so far `runs/script_output.rs`.

mod nodes;
mod notifications;
mod script_output;
mod timers;

use sqlx::any::AnyRow;
use sqlx::{Any, AssertSqlSafe, Row};

pub use sqlx::AnyConnection as Connection;

use crate::{Backend, Error, Store};

pub use nodes::{NodeRunRow, get_node_run, last_node_seq, node_runs, open_node_run, upsert_node_run};
pub use notifications::{
    AttemptEnd, AttemptRow, NewNotification, NotificationRow, claim_notification, due_notifications, finish_attempt,
    insert_notification, notifications_of_run,
};
pub use script_output::{
    ScriptOutputRow, clear_script_output, put_script_output, script_output, tree_script_output,
};
pub use timers::{DueTimer, clear_timer, drop_timer, due_timers, set_timer, timer_due_at};

/// One row of `workflow_runs`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// Lower-case alphanumeric id.
    pub id: String,
    /// The project, `""` for the global namespace.
    pub project_id: String,
    /// The project root directory, `None` in the global namespace.
    pub project_root: Option<String>,
    /// The top of this run's tree (its own id for a top-level run).
    pub root_run_id: String,
    /// The parent run of a subworkflow child.
    pub parent_run_id: Option<String>,
    /// The parent's subworkflow node run.
    pub parent_node_run_id: Option<String>,
    /// 0 for a top-level run.
    pub depth: i64,
    /// The workflow id.
    pub workflow_id: String,
    /// The workflow name.
    pub workflow_name: String,
    /// The workflow description.
    pub workflow_description: Option<String>,
    /// `global` or `repo`.
    pub workflow_source: String,
    /// The workflow file at start.
    pub workflow_path: String,
    /// The workflow's asset folder (`ROSCOE_WORKFLOW_DIR`).
    pub workflow_dir: String,
    /// JSON: the workflow (and model settings) as they were at start.
    pub workflow_snapshot: String,
    /// Who started it: `mcp`, `web`, `cli` or `test`.
    pub source: String,
    /// `user` or `test`.
    pub kind: String,
    /// `running`, `paused`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// The node the run is at (or failed at).
    pub current_node_id: Option<String>,
    /// JSON pending step owned by this run.
    pub pending_step: Option<String>,
    /// The child run a subworkflow node waits for.
    pub awaiting_child_run_id: Option<String>,
    /// JSON run input.
    pub input: String,
    /// JSON context: outputs, iterations, steps.
    pub context: String,
    /// JSON run output.
    pub output: Option<String>,
    /// Failure or cancel reason.
    pub error: Option<String>,
    /// Failure code.
    pub error_code: Option<String>,
    /// JSON host information.
    pub host: Option<String>,
    /// The process executing a synchronous node, while `running`.
    pub owner_pid: Option<i64>,
    /// When that process's claim lapses (epoch ms).
    pub lease_expires_at: Option<i64>,
    /// 1 + the number of retries.
    pub attempt: i64,
    /// Cost fields.
    pub total_cost_usd: f64,
    /// USD billed to an API key.
    pub metered_cost_usd: f64,
    /// USD list-price equivalent of subscription work.
    pub subscription_equiv_cost_usd: f64,
    /// `none`, `subscription`, `metered` or `mixed`.
    pub billing_mode: String,
    /// Input tokens so far.
    pub input_tokens: i64,
    /// Output tokens so far.
    pub output_tokens: i64,
    /// Epoch ms.
    pub started_at: i64,
    /// Epoch ms.
    pub completed_at: Option<i64>,
    /// Epoch ms.
    pub updated_at: i64,
    /// The principal that started it (`Ada (person)`), as its audit entries name it; `None` before that was kept.
    pub started_by: Option<String>,
    /// Whether it may run `script` nodes: its starter held `roscoe:exec` (a child inherits its parent's).
    pub exec_allowed: bool,
    /// Who runs its AI steps: `host` (handed back) or `server` (model providers).
    pub execution: String,
    /// JSON budget of the run tree (`{ usd?, tokens? }`), on the root.
    pub budget: Option<String>,
    /// JSON usage beyond the cost columns (cache tokens, calls by billing, unpriced calls).
    pub usage: Option<String>,
    /// Bumped by every change.
    pub version: i64,
}

/// One entry of `list_runs`.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct RunListRow {
    /// Run id.
    pub id: String,
    /// Workflow id.
    pub workflow_id: String,
    /// Workflow name.
    pub workflow_name: String,
    /// Status.
    pub status: String,
    /// Epoch ms.
    pub started_at: i64,
    /// Epoch ms.
    pub completed_at: Option<i64>,
    /// Who started it.
    pub source: String,
    /// `global` or `repo`.
    pub workflow_source: String,
    /// `user` or `test`.
    pub kind: String,
    /// The principal that started it, when known.
    pub started_by: Option<String>,
    /// The run's own model spend in USD.
    pub total_cost_usd: f64,
}

/// What `list_runs` selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListFilter {
    /// Exactly this project (`""` = global).
    pub project_id: String,
    /// Only this status.
    pub status: Option<String>,
    /// Only this workflow.
    pub workflow_id: Option<String>,
    /// Include subworkflow children.
    pub include_children: bool,
    /// Only runs whose id, workflow id or workflow name contains this text (case-insensitive).
    pub search: Option<String>,
    /// Only runs listed after this `(started_at, id)` — the last row of the previous page.
    pub after: Option<(i64, String)>,
    /// At most this many.
    pub limit: i64,
}

/// Every column of a run: first those fixed when it is made ([`FIXED_RUN_COLUMNS`] of them), then those its life
/// changes.
const RUN_COLUMNS: &str = "id, project_id, project_root, root_run_id, parent_run_id, parent_node_run_id, depth, \
    workflow_id, workflow_name, workflow_description, workflow_source, workflow_path, workflow_dir, workflow_snapshot, \
    source, kind, started_at, started_by, \
    status, current_node_id, pending_step, awaiting_child_run_id, input, context, output, error, error_code, host, \
    owner_pid, lease_expires_at, attempt, total_cost_usd, metered_cost_usd, subscription_equiv_cost_usd, billing_mode, \
    input_tokens, output_tokens, completed_at, updated_at, exec_allowed, execution, budget, usage, version";

/// How many of [`RUN_COLUMNS`] are fixed when a run is made: its identity, place in its tree, workflow and start.
/// Every index on `workflow_runs` is over these alone, so an update, which sets only the others, rewrites no index.
const FIXED_RUN_COLUMNS: usize = 18;

/// A write transaction (`BEGIN IMMEDIATE` on SQLite).
pub type Tx = crate::WriteTx;

/// Starts a write transaction on `store`.
pub async fn begin(store: &Store) -> Result<Tx, Error> {
    store.begin_write().await
}

/// Commits `tx`.
pub async fn commit(tx: Tx) -> Result<(), Error> {
    tx.commit().await
}

/// Rolls `tx` back.
pub async fn rollback(tx: Tx) -> Result<(), Error> {
    tx.rollback().await
}

/// Inserts a new run (its `version` as given, normally 0).
pub async fn insert_run(conn: &mut Connection, run: &RunRow) -> Result<(), Error> {
    // Audited: the statement is built from this module's constant column list only.
    let count = RUN_COLUMNS.split(", ").count();
    let values: Vec<String> = (1..=count).map(|i| format!("${i}")).collect();
    let sql = format!("INSERT INTO workflow_runs ({RUN_COLUMNS}) VALUES ({})", values.join(", "));
    bind_changing(bind_fixed(sqlx::query(AssertSqlSafe(sql)), run), run).execute(conn).await?;
    Ok(())
}

/// Writes `run` if the stored version is still `expected`, setting the stored version to `run.version`. Returns
/// whether it won; `false` means another writer changed the run first and nothing was written. Only the columns a
/// run's life changes are written; the rest stay as the run was made.
pub async fn update_run(conn: &mut Connection, run: &RunRow, expected: i64) -> Result<bool, Error> {
    let changing = RUN_COLUMNS.split(", ").skip(FIXED_RUN_COLUMNS);
    let sets: Vec<String> = changing.enumerate().map(|(i, column)| format!("{column} = ${}", i + 2)).collect();
    let expected_at = sets.len() + 2;
    let sql = format!("UPDATE workflow_runs SET {} WHERE id = $1 AND version = ${expected_at}", sets.join(", "));
    let query = bind_changing(sqlx::query(AssertSqlSafe(sql)).bind(&run.id), run);
    let done = query.bind(expected).execute(conn).await?;
    Ok(done.rows_affected() == 1)
}

type RunQuery<'q> = sqlx::query::Query<'q, Any, sqlx::any::AnyArguments>;

/// `query` with the first [`FIXED_RUN_COLUMNS`] of [`RUN_COLUMNS`] bound from `r`, in order.
fn bind_fixed<'q>(query: RunQuery<'q>, r: &'q RunRow) -> RunQuery<'q> {
    query
        .bind(&r.id)
        .bind(&r.project_id)
        .bind(&r.project_root)
        .bind(&r.root_run_id)
        .bind(&r.parent_run_id)
        .bind(&r.parent_node_run_id)
        .bind(r.depth)
        .bind(&r.workflow_id)
        .bind(&r.workflow_name)
        .bind(&r.workflow_description)
        .bind(&r.workflow_source)
        .bind(&r.workflow_path)
        .bind(&r.workflow_dir)
        .bind(&r.workflow_snapshot)
        .bind(&r.source)
        .bind(&r.kind)
        .bind(r.started_at)
        .bind(&r.started_by)
}

/// `query` with the rest of [`RUN_COLUMNS`], those a run's life changes, bound from `r`, in order.
fn bind_changing<'q>(query: RunQuery<'q>, r: &'q RunRow) -> RunQuery<'q> {
    query
        .bind(&r.status)
        .bind(&r.current_node_id)
        .bind(&r.pending_step)
        .bind(&r.awaiting_child_run_id)
        .bind(&r.input)
        .bind(&r.context)
        .bind(&r.output)
        .bind(&r.error)
        .bind(&r.error_code)
        .bind(&r.host)
        .bind(r.owner_pid)
        .bind(r.lease_expires_at)
        .bind(r.attempt)
        .bind(r.total_cost_usd)
        .bind(r.metered_cost_usd)
        .bind(r.subscription_equiv_cost_usd)
        .bind(&r.billing_mode)
        .bind(r.input_tokens)
        .bind(r.output_tokens)
        .bind(r.completed_at)
        .bind(r.updated_at)
        .bind(i64::from(r.exec_allowed))
        .bind(&r.execution)
        .bind(&r.budget)
        .bind(&r.usage)
        .bind(r.version)
}

fn run_from(row: &AnyRow) -> Result<RunRow, sqlx::Error> {
    Ok(RunRow {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        project_root: row.try_get("project_root")?,
        root_run_id: row.try_get("root_run_id")?,
        parent_run_id: row.try_get("parent_run_id")?,
        parent_node_run_id: row.try_get("parent_node_run_id")?,
        depth: row.try_get("depth")?,
        workflow_id: row.try_get("workflow_id")?,
        workflow_name: row.try_get("workflow_name")?,
        workflow_description: row.try_get("workflow_description")?,
        workflow_source: row.try_get("workflow_source")?,
        workflow_path: row.try_get("workflow_path")?,
        workflow_dir: row.try_get("workflow_dir")?,
        workflow_snapshot: row.try_get("workflow_snapshot")?,
        source: row.try_get("source")?,
        kind: row.try_get("kind")?,
        status: row.try_get("status")?,
        current_node_id: row.try_get("current_node_id")?,
        pending_step: row.try_get("pending_step")?,
        awaiting_child_run_id: row.try_get("awaiting_child_run_id")?,
        input: row.try_get("input")?,
        context: row.try_get("context")?,
        output: row.try_get("output")?,
        error: row.try_get("error")?,
        error_code: row.try_get("error_code")?,
        host: row.try_get("host")?,
        owner_pid: row.try_get("owner_pid")?,
        lease_expires_at: row.try_get("lease_expires_at")?,
        attempt: row.try_get("attempt")?,
        total_cost_usd: row.try_get("total_cost_usd")?,
        metered_cost_usd: row.try_get("metered_cost_usd")?,
        subscription_equiv_cost_usd: row.try_get("subscription_equiv_cost_usd")?,
        billing_mode: row.try_get("billing_mode")?,
        input_tokens: row.try_get("input_tokens")?,
        output_tokens: row.try_get("output_tokens")?,
        started_at: row.try_get("started_at")?,
        completed_at: row.try_get("completed_at")?,
        updated_at: row.try_get("updated_at")?,
        started_by: row.try_get("started_by")?,
        exec_allowed: row.try_get::<i64, _>("exec_allowed")? != 0,
        execution: row.try_get("execution")?,
        budget: row.try_get("budget")?,
        usage: row.try_get("usage")?,
        version: row.try_get("version")?,
    })
}

/// The run `id`, if it exists.
pub async fn get_run(conn: &mut Connection, id: &str) -> Result<Option<RunRow>, Error> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM workflow_runs WHERE id = $1");
    let row = sqlx::query(AssertSqlSafe(sql)).bind(id).fetch_optional(conn).await?;
    Ok(row.as_ref().map(run_from).transpose()?)
}

/// The run `id` read for a change, inside a write transaction: its row stays locked until the transaction ends
/// ([`Backend::lock_rows`]).
pub async fn lock_run(conn: &mut Connection, id: &str) -> Result<Option<RunRow>, Error> {
    let lock = Backend::of(conn).lock_rows();
    let sql = format!("SELECT {RUN_COLUMNS} FROM workflow_runs WHERE id = $1{lock}");
    let row = sqlx::query(AssertSqlSafe(sql)).bind(id).fetch_optional(conn).await?;
    Ok(row.as_ref().map(run_from).transpose()?)
}

/// [`runs_in_tree`] read for a change of the whole tree: every row stays locked until the transaction ends.
pub async fn lock_tree(conn: &mut Connection, root_id: &str) -> Result<Vec<RunRow>, Error> {
    let lock = Backend::of(conn).lock_rows();
    let sql = format!(
        "SELECT {RUN_COLUMNS} FROM workflow_runs WHERE root_run_id = $1 ORDER BY depth, started_at, id{lock}"
    );
    let rows = sqlx::query(AssertSqlSafe(sql)).bind(root_id).fetch_all(conn).await?;
    Ok(rows.iter().map(run_from).collect::<Result<_, _>>()?)
}

/// Every run of the tree rooted at `root_id` (the root included), parents before children.
pub async fn runs_in_tree(conn: &mut Connection, root_id: &str) -> Result<Vec<RunRow>, Error> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM workflow_runs WHERE root_run_id = $1 ORDER BY depth, started_at, id");
    let rows = sqlx::query(AssertSqlSafe(sql)).bind(root_id).fetch_all(conn).await?;
    Ok(rows.iter().map(run_from).collect::<Result<_, _>>()?)
}

/// Ids of the runs whose parent is `parent_id`, oldest first.
pub async fn child_run_ids(conn: &mut Connection, parent_id: &str) -> Result<Vec<String>, Error> {
    let rows = sqlx::query("SELECT id FROM workflow_runs WHERE parent_run_id = $1 ORDER BY started_at, id")
        .bind(parent_id)
        .fetch_all(conn)
        .await?;
    Ok(rows.iter().map(|r| r.try_get("id")).collect::<Result<_, _>>()?)
}

/// Runs in `filter`'s project, newest first (ties: id descending), from after `filter.after` on.
pub async fn list_runs(conn: &mut Connection, filter: &ListFilter) -> Result<Vec<RunListRow>, Error> {
    let mut sql = String::from(
        "SELECT id, workflow_id, workflow_name, status, started_at, completed_at, source, workflow_source, kind, \
         started_by, total_cost_usd FROM workflow_runs WHERE project_id = $1 AND kind = 'user'",
    );
    let mut binds: Vec<String> = vec![filter.project_id.clone()];
    let mut push = |sql: &mut String, clause: &str, value: String| {
        binds.push(value);
        sql.push_str(&clause.replace('?', &format!("${}", binds.len())));
    };
    if let Some(status) = &filter.status {
        push(&mut sql, " AND status = ?", status.clone());
    }
    if let Some(workflow_id) = &filter.workflow_id {
        push(&mut sql, " AND workflow_id = ?", workflow_id.clone());
    }
    if let Some(text) = filter.search.as_deref().filter(|t| !t.is_empty()) {
        push(&mut sql, " AND (LOWER(id) LIKE ? ESCAPE '\\'", like_anywhere(text));
        let n = binds.len();
        sql.push_str(&format!(
            " OR LOWER(workflow_id) LIKE ${n} ESCAPE '\\' OR LOWER(workflow_name) LIKE ${n} ESCAPE '\\')"
        ));
    }
    if !filter.include_children {
        sql.push_str(" AND parent_run_id IS NULL");
    }
    let n = binds.len() + 1;
    sql.push_str(&format!(
        " AND (started_at < ${n} OR (started_at = ${n} AND id < ${})) ORDER BY started_at DESC, id DESC LIMIT ${}",
        n + 1,
        n + 2
    ));
    let (after_at, after_id) = filter.after.clone().unwrap_or((i64::MAX, String::new()));
    let mut query = sqlx::query_as(AssertSqlSafe(sql));
    for value in binds {
        query = query.bind(value);
    }
    Ok(query.bind(after_at).bind(after_id).bind(filter.limit).fetch_all(conn).await?)
}

/// The `LIKE … ESCAPE '\'` pattern that finds `text` (lower-cased) anywhere.
fn like_anywhere(text: &str) -> String {
    let escaped = text.to_lowercase().replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    format!("%{escaped}%")
}

/// Extends the lease of a running run held by process `pid` until `until` (epoch ms); `false` when the run is no
/// longer running under that process.
pub async fn renew_lease(conn: &mut Connection, run_id: &str, pid: i64, until: i64) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE workflow_runs SET lease_expires_at = $1 WHERE id = $2 AND owner_pid = $3 AND status = 'running'",
    )
    .bind(until)
    .bind(run_id)
    .bind(pid)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Appends an event to a run's log; `seq` is the run version the event produced. After the commit, tell the changes
/// feed ([`Changes::committed`](crate::changes::Changes::committed)). Each is logged (`run event`: run, seq and
/// type, never its data, which holds the run's inputs and outputs).
pub async fn append_event(
    conn: &mut Connection,
    run_id: &str,
    seq: i64,
    ts: i64,
    kind: &str,
    data: &str,
) -> Result<(), Error> {
    sqlx::query("INSERT INTO run_events (run_id, seq, ts, type, data) VALUES ($1, $2, $3, $4, $5)")
        .bind(run_id)
        .bind(seq)
        .bind(ts)
        .bind(kind)
        .bind(data)
        .execute(&mut *conn)
        .await?;
    tracing::info!(run_id, seq, event = kind, "run event");
    Ok(())
}

/// Records that project `id` (at `root_path`) was used at `now`.
pub async fn touch_project(conn: &mut Connection, id: &str, root_path: &str, name: &str, now: i64) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO projects (id, root_path, name, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $4) \
         ON CONFLICT (id) DO UPDATE SET last_seen_at = excluded.last_seen_at",
    )
    .bind(id)
    .bind(root_path)
    .bind(name)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

/// Deletes the run tree rooted at `root_id`: its runs, their node runs, events, timers and scripts' live output.
pub async fn delete_run_tree(conn: &mut Connection, root_id: &str) -> Result<(), Error> {
    let subquery = "SELECT id FROM workflow_runs WHERE root_run_id = $1";
    for table in ["node_runs", "run_events", "run_timers", "script_output"] {
        sqlx::query(AssertSqlSafe(format!("DELETE FROM {table} WHERE run_id IN ({subquery})"))).bind(root_id).execute(&mut *conn).await?;
    }
    sqlx::query("DELETE FROM workflow_runs WHERE root_run_id = $1").bind(root_id).execute(conn).await?;
    Ok(())
}

/// Runs whose AI steps the server runs (`execution = 'server'`) that are `running`: a process is calling models for
/// them, or was until it stopped (the sweep of `cairn serve` resumes those whose process is gone).
pub async fn running_server_runs(conn: &mut Connection) -> Result<Vec<RunRow>, Error> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM workflow_runs WHERE status = 'running' AND execution = 'server'");
    let rows = sqlx::query(AssertSqlSafe(sql)).fetch_all(conn).await?;
    Ok(rows.iter().map(run_from).collect::<Result<_, _>>()?)
}

/// Top-level test runs (`kind = 'test'`): id, owner process and start time, for the orphan sweep.
pub async fn test_runs(conn: &mut Connection) -> Result<Vec<(String, Option<i64>, i64)>, Error> {
    let rows = sqlx::query(
        "SELECT id, owner_pid, started_at FROM workflow_runs WHERE kind = 'test' AND parent_run_id IS NULL",
    )
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("id")?, r.try_get("owner_pid")?, r.try_get("started_at")?)))
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TestStore, node_row as node, run_row};

    /// A paused run with some cost.
    fn run(id: &str, project: &str, started_at: i64) -> RunRow {
        RunRow {
            status: "paused".into(),
            current_node_id: Some("a".into()),
            total_cost_usd: 0.5,
            subscription_equiv_cost_usd: 0.5,
            input_tokens: 3,
            output_tokens: 4,
            ..run_row(id, project, started_at)
        }
    }

    async fn store() -> (TestStore, Store) {
        let test = TestStore::new().await;
        let store = test.store.clone();
        (test, store)
    }

    #[tokio::test]
    async fn a_run_round_trips_and_updates_only_from_the_version_it_was_read_at() {
        let (_dir, store) = store().await;
        let mut tx = store.begin_write().await.unwrap();
        let mut row = run("r1", "p", 10);
        row.status = "running".into();
        row.execution = "server".into();
        row.budget = Some(r#"{"usd":2.5}"#.into());
        row.usage = Some(r#"{"cacheReadTokens":7}"#.into());
        insert_run(&mut tx, &row).await.unwrap();
        tx.commit().await.unwrap();

        let mut conn = store.read().await.unwrap();
        assert_eq!(get_run(&mut conn, "r1").await.unwrap(), Some(row.clone()));
        assert_eq!(running_server_runs(&mut conn).await.unwrap(), vec![row.clone()]);
        drop(conn);

        row.status = "completed".into();
        row.version = 1;
        let mut tx = store.begin_write().await.unwrap();
        assert!(update_run(&mut tx, &row, 0).await.unwrap());
        tx.commit().await.unwrap();
        let mut stale = row.clone();
        stale.status = "failed".into();
        stale.version = 1;
        let mut tx = store.begin_write().await.unwrap();
        assert!(!update_run(&mut tx, &stale, 0).await.unwrap(), "a second writer from version 0 loses");
        tx.commit().await.unwrap();
        let mut conn = store.read().await.unwrap();
        assert_eq!(get_run(&mut conn, "r1").await.unwrap().unwrap().status, "completed");
        assert!(running_server_runs(&mut conn).await.unwrap().is_empty(), "a finished run is nobody's to resume");
    }

    #[tokio::test]
    async fn an_update_keeps_what_a_run_was_made_with_and_no_index_is_over_what_it_writes() {
        let (_dir, store) = store().await;
        let made = run("r1", "p", 10);
        let mut tx = store.begin_write().await.unwrap();
        insert_run(&mut tx, &made).await.unwrap();
        let mut changed = RunRow { status: "completed".into(), version: 1, ..run("r1", "elsewhere", 99) };
        changed.workflow_snapshot = "another".into();
        assert!(update_run(&mut tx, &changed, 0).await.unwrap());
        tx.commit().await.unwrap();
        let mut conn = store.read().await.unwrap();
        let stored = get_run(&mut conn, "r1").await.unwrap().unwrap();
        assert_eq!((stored.status.as_str(), stored.version), ("completed", 1), "what a run's life changes is written");
        let kept = |r: &RunRow| (r.project_id.clone(), r.started_at, r.workflow_snapshot.clone());
        assert_eq!(kept(&stored), kept(&made), "what it was made with is not");

        let fixed: Vec<&str> = RUN_COLUMNS.split(", ").take(FIXED_RUN_COLUMNS).collect();
        for (table, fixed) in [("workflow_runs", &fixed[..]), ("node_runs", &nodes::FIXED_NODE_COLUMNS[..])] {
            let indexed = match store.backend() {
                Backend::Sqlite => format!(
                    "SELECT DISTINCT i.name AS column_name FROM pragma_index_list('{table}') l, pragma_index_info(l.name) i"
                ),
                Backend::Postgres => format!(
                    "SELECT DISTINCT a.attname::text AS column_name FROM pg_index x JOIN pg_attribute a \
                     ON a.attrelid = x.indrelid AND a.attnum = ANY (x.indkey) WHERE x.indrelid = '{table}'::regclass"
                ),
            };
            let columns: Vec<String> = sqlx::query(AssertSqlSafe(indexed))
                .fetch_all(&mut *conn)
                .await
                .unwrap()
                .iter()
                .map(|row| row.get("column_name"))
                .collect();
            assert!(columns.len() >= 2, "{table}'s indexes were read: {columns:?}");
            for column in &columns {
                assert!(fixed.contains(&column.as_str()), "an index on {table} is over `{column}`, which an update writes");
            }
        }
    }

    #[tokio::test]
    async fn a_change_reads_its_run_only_after_a_concurrent_change_of_it_commits() {
        let (_test, store) = store().await;
        let mut tx = store.begin_write().await.unwrap();
        insert_run(&mut tx, &run("r1", "p", 10)).await.unwrap();
        tx.commit().await.unwrap();

        let mut first = store.begin_write().await.unwrap();
        let mut row = lock_run(&mut first, "r1").await.unwrap().unwrap();
        let other = store.clone();
        let second = tokio::spawn(async move {
            let mut tx = other.begin_write().await.unwrap();
            let seen = lock_tree(&mut tx, "r1").await.unwrap().remove(0);
            let next = RunRow { status: "failed".into(), version: seen.version + 1, ..seen.clone() };
            let won = update_run(&mut tx, &next, seen.version).await.unwrap();
            tx.commit().await.unwrap();
            (seen.status, won)
        });
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(!second.is_finished(), "the second change waits for the first");
        row.status = "completed".into();
        row.version = 1;
        assert!(update_run(&mut first, &row, 0).await.unwrap());
        first.commit().await.unwrap();
        let (seen, won) = second.await.unwrap();
        assert_eq!((seen.as_str(), won), ("completed", true), "it read the first change's result and built on it");
        let mut conn = store.read().await.unwrap();
        assert_eq!(get_run(&mut conn, "r1").await.unwrap().unwrap().version, 2);
    }

    #[tokio::test]
    async fn node_runs_upsert_in_order_and_trees_delete_whole() {
        let (_dir, store) = store().await;
        let mut tx = store.begin_write().await.unwrap();
        insert_run(&mut tx, &run("root", "p", 1)).await.unwrap();
        let mut child = run("kid", "p", 2);
        child.root_run_id = "root".into();
        child.parent_run_id = Some("root".into());
        child.depth = 1;
        insert_run(&mut tx, &child).await.unwrap();
        upsert_node_run(&mut tx, &node("n2", "root", 2)).await.unwrap();
        let mut first = node("n1", "root", 1);
        upsert_node_run(&mut tx, &first).await.unwrap();
        first.status = "completed".into();
        first.output = Some("{\"text\":\"x\"}".into());
        first.usage = Some("{\"calls\":[]}".into());
        upsert_node_run(&mut tx, &first).await.unwrap();
        upsert_node_run(&mut tx, &node("k1", "kid", 1)).await.unwrap();
        append_event(&mut tx, "root", 1, 5, "status", "{}").await.unwrap();
        tx.commit().await.unwrap();

        let mut conn = store.read().await.unwrap();
        let nodes = node_runs(&mut conn, "root").await.unwrap();
        assert_eq!(nodes.iter().map(|n| n.id.as_str()).collect::<Vec<_>>(), ["n1", "n2"]);
        assert_eq!(nodes[0].status, "completed");
        assert_eq!(nodes[0].usage.as_deref(), Some("{\"calls\":[]}"));
        assert_eq!(last_node_seq(&mut conn, "root").await.unwrap(), 2);
        assert_eq!(child_run_ids(&mut conn, "root").await.unwrap(), ["kid"]);
        assert_eq!(open_node_run(&mut conn, "root").await.unwrap().map(|n| n.id), Some("n2".to_owned()));
        assert_eq!(runs_in_tree(&mut conn, "root").await.unwrap().len(), 2);
        drop(conn);

        let mut tx = store.begin_write().await.unwrap();
        delete_run_tree(&mut tx, "root").await.unwrap();
        tx.commit().await.unwrap();
        let mut conn = store.read().await.unwrap();
        assert!(get_run(&mut conn, "kid").await.unwrap().is_none());
        assert!(node_runs(&mut conn, "kid").await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn list_runs_filters_by_exact_project_kind_and_parent_newest_first() {
        let (_dir, store) = store().await;
        let mut tx = store.begin_write().await.unwrap();
        insert_run(&mut tx, &run("a", "p", 1)).await.unwrap();
        insert_run(&mut tx, &run("b", "p", 3)).await.unwrap();
        insert_run(&mut tx, &run("c", "", 2)).await.unwrap();
        let mut test = run("t", "p", 4);
        test.kind = "test".into();
        insert_run(&mut tx, &test).await.unwrap();
        let mut child = run("k", "p", 5);
        child.parent_run_id = Some("a".into());
        child.root_run_id = "a".into();
        insert_run(&mut tx, &child).await.unwrap();
        tx.commit().await.unwrap();

        let mut conn = store.read().await.unwrap();
        let mut filter = ListFilter {
            project_id: "p".into(),
            status: None,
            workflow_id: None,
            include_children: false,
            search: None,
            after: None,
            limit: 20,
        };
        let ids = |rows: Vec<RunListRow>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
        assert_eq!(ids(list_runs(&mut conn, &filter).await.unwrap()), ["b", "a"]);
        filter.include_children = true;
        assert_eq!(ids(list_runs(&mut conn, &filter).await.unwrap()), ["k", "b", "a"]);
        filter.status = Some("completed".into());
        assert!(list_runs(&mut conn, &filter).await.unwrap().is_empty());
        filter.status = None;
        filter.project_id = String::new();
        assert_eq!(ids(list_runs(&mut conn, &filter).await.unwrap()), ["c"]);
        assert_eq!(test_runs(&mut conn).await.unwrap(), vec![("t".to_owned(), None, 4)]);
        assert!(running_server_runs(&mut conn).await.unwrap().is_empty(), "paused host runs are not the server's");
    }

    #[tokio::test]
    async fn list_runs_pages_by_cursor_and_searches_ids_and_workflows_with_wildcards_taken_literally() {
        let (_dir, store) = store().await;
        let mut tx = store.begin_write().await.unwrap();
        // Five runs, two of them started in the same millisecond: the id breaks the tie.
        let runs = [("r1", 1, "Ship"), ("r2", 2, "ship_it"), ("r3", 2, "Review"), ("r4", 3, "ship"), ("r5", 4, "50%")];
        for (id, at, workflow) in runs {
            let mut row = run(id, "p", at);
            row.workflow_id = workflow.to_lowercase();
            row.workflow_name = format!("{workflow} flow");
            row.started_by = Some("Ada (person)".into());
            insert_run(&mut tx, &row).await.unwrap();
        }
        tx.commit().await.unwrap();

        let mut conn = store.read().await.unwrap();
        let mut filter = ListFilter {
            project_id: "p".into(),
            status: None,
            workflow_id: None,
            include_children: false,
            search: None,
            after: None,
            limit: 2,
        };
        let mut seen = Vec::new();
        loop {
            let page = list_runs(&mut conn, &filter).await.unwrap();
            let Some(last) = page.last() else { break };
            filter.after = Some((last.started_at, last.id.clone()));
            seen.extend(page.into_iter().map(|r| r.id));
        }
        assert_eq!(seen, ["r5", "r4", "r3", "r2", "r1"], "no gap and no overlap across pages");

        filter.limit = 20;
        for (search, expected, why) in [
            ("SHIP", &["r4", "r2", "r1"][..], "workflow id or name, case-insensitive"),
            ("r3", &["r3"], "the run id"),
            ("p_i", &["r2"], "`_` is a character, not a wildcard"),
            ("0%", &["r5"], "`%` is a character too"),
        ] {
            let filter = ListFilter { search: Some(search.into()), after: None, ..filter.clone() };
            let ids: Vec<String> = list_runs(&mut conn, &filter).await.unwrap().into_iter().map(|r| r.id).collect();
            assert_eq!(ids, expected, "{why}");
        }
        filter.after = None;
        let row = &list_runs(&mut conn, &filter).await.unwrap()[0];
        assert_eq!((row.started_by.as_deref(), row.total_cost_usd), (Some("Ada (person)"), 0.5));
    }
}
