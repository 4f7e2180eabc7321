//! `run_timers`: at most one durable timer per paused run — the moment its step falls due without anyone looking.
//! A step that leaves a run waiting sets it ([`set_timer`]) or clears it ([`clear_timer`]) in the step's own
//! transaction; every server reads those due ([`due_timers`]) and fires them through the run's compare-and-swap.

use sqlx::Row;

use super::Connection;
use crate::Error;

/// One timer that has fallen due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueTimer {
    /// The paused run.
    pub run_id: String,
    /// The top of its tree.
    pub root_run_id: String,
    /// The node run waiting when the timer was set.
    pub node_run_id: String,
    /// What falls due: `step_timeout`.
    pub kind: String,
    /// Epoch ms.
    pub due_at: i64,
}

/// Sets run `run_id`'s timer: `kind` falls due for node run `node_run_id` at `due_at` (epoch ms), replacing any
/// timer the run had.
pub async fn set_timer(
    conn: &mut Connection,
    run_id: &str,
    node_run_id: &str,
    kind: &str,
    due_at: i64,
) -> Result<(), Error> {
    clear_timer(conn, run_id).await?;
    sqlx::query("INSERT INTO run_timers (run_id, node_run_id, kind, due_at) VALUES ($1, $2, $3, $4)")
        .bind(run_id)
        .bind(node_run_id)
        .bind(kind)
        .bind(due_at)
        .execute(conn)
        .await?;
    Ok(())
}

/// Removes run `run_id`'s timer, if it has one.
pub async fn clear_timer(conn: &mut Connection, run_id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM run_timers WHERE run_id = $1").bind(run_id).execute(conn).await?;
    Ok(())
}

/// When run `run_id`'s timer falls due (epoch ms), if it has one.
pub async fn timer_due_at(conn: &mut Connection, run_id: &str) -> Result<Option<i64>, Error> {
    let row = sqlx::query("SELECT due_at FROM run_timers WHERE run_id = $1").bind(run_id).fetch_optional(conn).await?;
    Ok(row.map(|r| r.try_get("due_at")).transpose()?)
}

/// At most `limit` timers due by `now` (epoch ms), the earliest first.
pub async fn due_timers(conn: &mut Connection, now: i64, limit: i64) -> Result<Vec<DueTimer>, Error> {
    let rows = sqlx::query(
        "SELECT t.run_id, r.root_run_id, t.node_run_id, t.kind, t.due_at FROM run_timers t \
         JOIN workflow_runs r ON r.id = t.run_id WHERE t.due_at <= $1 ORDER BY t.due_at, t.run_id LIMIT $2",
    )
    .bind(now)
    .bind(limit)
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(DueTimer {
                run_id: r.try_get("run_id")?,
                root_run_id: r.try_get("root_run_id")?,
                node_run_id: r.try_get("node_run_id")?,
                kind: r.try_get("kind")?,
                due_at: r.try_get("due_at")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}
