//! Durable timers: a run waiting out a node's `delayMs`, or paused at a human step with `timeoutMs`, keeps a row in
//! `run_timers`, set and cleared in the same transaction as the step that paused or moved the run
//! ([`Runs::set_timer`]). Every `cairn serve` and `roscoe mcp` of the database watches the table
//! ([`Runs::keep_time`]) and fires what fell due — after a restart too, since the table outlives the process.
//! Firing is an ordinary step (`TimerFired`) under the run's lock and version check, so of several servers that see
//! one timer, one moves the run and the others find the step gone.

use std::time::Duration;

use cairn_store::runs::{self as rows, Connection, RunRow};

use super::Runs;
use super::tree::Tree;
use crate::clock::now_ms;
use crate::definition::NodeType;
use crate::engine::{Event, NodeRun, Run, RunStatus};
use crate::error::Error;

/// How often the timers are read: a timer fires within this of its due time (plus the step itself).
const WATCH_EVERY: Duration = Duration::from_millis(250);
/// At most this many timers are fired per read; the rest on the next.
const FIRE_AT_ONCE: i64 = 100;

impl Runs {
    /// Inside the transaction that writes `run` over `base`: sets the run's timer when it now waits out a node's
    /// `delayMs` or at a human step with `timeoutMs`, and clears the one it had when it waited at such a node before
    /// (so a step of any other run costs no statement here). Test runs keep no timers: `test_workflow` skips delays,
    /// and its mocks, not the server's clock, answer human steps.
    pub(super) async fn set_timer(&self, tx: &mut Connection, base: &RunRow, run: &Run) -> Result<(), Error> {
        if base.kind == "test" {
            return Ok(());
        }
        let timed = |node_id: &str| {
            let node = run.workflow.node(node_id)?;
            node.delay_ms().or(node.timeout_ms.filter(|_| node.kind == NodeType::Human))
        };
        let waiting = run.open.as_ref().filter(|_| run.status == RunStatus::Paused);
        if let Some((open, due)) = waiting.and_then(|open| Some((open, due_at(run, open)?))) {
            rows::set_timer(tx, &run.id, &open.id, due).await?;
        } else if base.status == "paused" && base.current_node_id.as_deref().and_then(timed).is_some() {
            rows::clear_timer(tx, &run.id).await?;
        }
        Ok(())
    }

    /// When the paused run `run_id`'s step falls due on its own (epoch ms), if it does.
    pub(super) async fn timer_due_at(&self, run_id: &str) -> Result<Option<i64>, Error> {
        let mut conn = self.inner.store.read().await?;
        Ok(rows::timer_due_at(&mut conn, run_id).await?)
    }

    /// Fires the timers due now: a node whose delay is over starts, a human step left unanswered takes its `timeout`
    /// route, and the run goes on from there. Returns how many this call fired. A timer whose step the engine no longer
    /// finds waiting (answered, cancelled, or fired by another server first) is dropped; one that failed for an
    /// internal reason (the database) stays for the next read, and the rest still fire.
    pub async fn fire_due_timers(&self) -> Result<usize, Error> {
        let mut conn = self.inner.store.read().await?;
        let due = rows::due_timers(&mut conn, now_ms(), FIRE_AT_ONCE).await?;
        drop(conn);
        let mut fired = 0;
        for timer in due {
            let event = Event::TimerFired { node_run_id: timer.node_run_id.clone() };
            match self.drive(&timer.run_id, event, &mut Tree::unread(&timer.root_run_id)).await {
                Ok(_) => fired += 1,
                Err(error) if error.is_internal() => {
                    tracing::warn!("could not fire the timer of run {}: {error}", timer.run_id);
                }
                Err(_) => {
                    let mut tx = rows::begin(&self.inner.store).await?;
                    rows::drop_timer(&mut tx, &timer.run_id, &timer.node_run_id).await?;
                    rows::commit(tx).await?;
                }
            }
        }
        Ok(fired)
    }

    /// Watches the timers of this database in the background for as long as the process runs: overdue ones fire at
    /// once (after a restart, those that fell due while no server ran), the rest within [`WATCH_EVERY`] of their time.
    pub fn keep_time(&self) -> tokio::task::JoinHandle<()> {
        self.every(WATCH_EVERY, "fire the run timers that fell due", |runs| async move { runs.fire_due_timers().await })
    }
}

/// When the wait of `run` at its paused node run `open` ends on its own (epoch ms): the end of a delay, or a human
/// step's timeout counted from when the step started.
pub(super) fn due_at(run: &Run, open: &NodeRun) -> Option<i64> {
    if let Some(until) = run.delayed_until() {
        return Some(until);
    }
    let node = run.workflow.node(&open.node_id).filter(|n| n.kind == NodeType::Human)?;
    Some(open.started_at + i64::try_from(node.timeout_ms?).ok()?)
}
