//! `run_timers`: at most one durable timer per paused run — the moment its step falls due without anyone looking.
//! A step that leaves a run waiting sets it ([`set_timer`]) or clears it ([`clear_timer`]) in the step's own
//! transaction; every server reads those due ([`due_timers`]) and fires them through the run's compare-and-swap,
//! dropping one whose step no longer waits ([`drop_timer`]).

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
}

/// Sets run `run_id`'s timer: node run `node_run_id` falls due at `due_at` (epoch ms), replacing any timer the run
/// had.
pub async fn set_timer(conn: &mut Connection, run_id: &str, node_run_id: &str, due_at: i64) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO run_timers (run_id, node_run_id, due_at) VALUES ($1, $2, $3) \
         ON CONFLICT (run_id) DO UPDATE SET node_run_id = excluded.node_run_id, due_at = excluded.due_at",
    )
    .bind(run_id)
    .bind(node_run_id)
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

/// Removes run `run_id`'s timer if it is still the one node run `node_run_id` set (not one a later step set).
pub async fn drop_timer(conn: &mut Connection, run_id: &str, node_run_id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM run_timers WHERE run_id = $1 AND node_run_id = $2")
        .bind(run_id)
        .bind(node_run_id)
        .execute(conn)
        .await?;
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
        "SELECT t.run_id, r.root_run_id, t.node_run_id FROM run_timers t \
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
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}
