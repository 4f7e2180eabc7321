//! Read-only queries for watching runs from outside the run facade: the projects that have runs (the web UI's
//! workspace switcher) and the event log of a whole run tree (live updates, re-read when the
//! [`changes`](crate::changes) feed names the tree, so changes made by any process sharing the database show up).
//! Nothing here writes.

use sqlx::{AssertSqlSafe, Row};

use crate::Error;
use crate::runs::Connection;

/// One row of `projects` with how many top-level user runs it has.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ProjectRow {
    /// 16 hex chars.
    pub id: String,
    /// The project root directory.
    pub root_path: String,
    /// The folder name.
    pub name: String,
    /// Epoch ms.
    pub last_seen_at: i64,
    /// Top-level user runs.
    pub run_count: i64,
}

/// One row of `run_events`.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct EventRow {
    /// The run (root or child) the event belongs to.
    pub run_id: String,
    /// The run version the event produced.
    pub seq: i64,
    /// Epoch ms.
    pub ts: i64,
    /// The event type (`state`, …).
    #[sqlx(rename = "type")]
    pub kind: String,
    /// JSON text.
    pub data: String,
}

/// Counts only top-level runs a person started (`kind = 'user'`), as the run list shows them.
const TOP_LEVEL_USER_RUNS: &str = "kind = 'user' AND parent_run_id IS NULL";

/// Every known project, most recently used first, with its run count.
pub async fn projects(conn: &mut Connection) -> Result<Vec<ProjectRow>, Error> {
    let sql = format!(
        "SELECT p.id, p.root_path, p.name, p.last_seen_at, \
         (SELECT COUNT(*) FROM workflow_runs r WHERE r.project_id = p.id AND r.{TOP_LEVEL_USER_RUNS}) AS run_count \
         FROM projects p ORDER BY p.last_seen_at DESC, p.id"
    );
    Ok(sqlx::query_as(AssertSqlSafe(sql)).fetch_all(conn).await?)
}

/// Top-level user runs of the global namespace (project id `""`).
pub async fn global_run_count(conn: &mut Connection) -> Result<i64, Error> {
    let sql = format!("SELECT COUNT(*) AS n FROM workflow_runs WHERE project_id = '' AND {TOP_LEVEL_USER_RUNS}");
    let row = sqlx::query(AssertSqlSafe(sql)).fetch_one(conn).await?;
    Ok(row.try_get("n")?)
}

/// The root of `run_id`'s tree (the id [`Change::Run`](crate::changes::Change::Run) names), if the run exists.
pub async fn root_run_id(conn: &mut Connection, run_id: &str) -> Result<Option<String>, Error> {
    let row = sqlx::query("SELECT root_run_id FROM workflow_runs WHERE id = $1").bind(run_id).fetch_optional(conn).await?;
    Ok(row.map(|r| r.try_get("root_run_id")).transpose()?)
}

/// How many events the tree of `run_id` (its root and every descendant) has logged: a cheap change detector, since
/// the log only grows while the tree exists.
pub async fn tree_event_count(conn: &mut Connection, run_id: &str) -> Result<i64, Error> {
    let row = sqlx::query(
        "SELECT COUNT(*) AS n FROM run_events WHERE run_id IN (SELECT id FROM workflow_runs WHERE root_run_id = \
         (SELECT root_run_id FROM workflow_runs WHERE id = $1))",
    )
    .bind(run_id)
    .fetch_one(conn)
    .await?;
    Ok(row.try_get("n")?)
}

/// Every event of the tree of `run_id`, oldest first.
pub async fn tree_events(conn: &mut Connection, run_id: &str) -> Result<Vec<EventRow>, Error> {
    Ok(sqlx::query_as(
        "SELECT run_id, seq, ts, type, data FROM run_events WHERE run_id IN (SELECT id FROM workflow_runs WHERE \
         root_run_id = (SELECT root_run_id FROM workflow_runs WHERE id = $1)) ORDER BY ts, run_id, seq",
    )
    .bind(run_id)
    .fetch_all(conn)
    .await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TestStore, run_row};
    use crate::runs::{self, RunRow};

    /// A run of the tree `root` (a child when it is not `root` itself).
    fn run(id: &str, root: &str, project: &str) -> RunRow {
        RunRow {
            root_run_id: root.into(),
            parent_run_id: (id != root).then(|| root.to_owned()),
            depth: i64::from(id != root),
            ..run_row(id, project, 1)
        }
    }

    #[tokio::test]
    async fn projects_count_top_level_runs_and_tree_events_cover_children() {
        let test = TestStore::new().await;
        let store = &test.store;
        let mut tx = store.begin_write().await.unwrap();
        runs::touch_project(&mut tx, "p1", "/src/p1", "p1", 5).await.unwrap();
        runs::insert_run(&mut tx, &run("root", "root", "p1")).await.unwrap();
        runs::insert_run(&mut tx, &run("child", "root", "p1")).await.unwrap();
        runs::insert_run(&mut tx, &run("g", "g", "")).await.unwrap();
        runs::append_event(&mut tx, "root", 1, 10, "state", "{}").await.unwrap();
        runs::append_event(&mut tx, "child", 1, 11, "state", "{}").await.unwrap();
        runs::append_event(&mut tx, "g", 1, 12, "state", "{}").await.unwrap();
        tx.commit().await.unwrap();

        let mut conn = store.read().await.unwrap();
        let found = projects(&mut conn).await.unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].id.as_str(), found[0].run_count), ("p1", 1));
        assert_eq!(global_run_count(&mut conn).await.unwrap(), 1);
        assert_eq!(tree_event_count(&mut conn, "child").await.unwrap(), 2);
        let events = tree_events(&mut conn, "root").await.unwrap();
        assert_eq!(events.iter().map(|e| e.run_id.as_str()).collect::<Vec<_>>(), ["root", "child"]);
        assert_eq!(tree_event_count(&mut conn, "missing").await.unwrap(), 0);
        assert_eq!(root_run_id(&mut conn, "child").await.unwrap().as_deref(), Some("root"));
        assert_eq!(root_run_id(&mut conn, "missing").await.unwrap(), None);
    }
}
