//! Leases and lost runners: while a run executes (a script, most often) it is `running` under this process's id with
//! a lease the process renews; a run whose process is gone, or whose lease ran out, has lost its runner. The next
//! process that looks at its tree finds it here ([`Overdue`]) and fails it (`runner_lost`) — a script is never
//! re-executed; the model calls of a server-executed run are made again instead (they change nothing outside the run).
//! Delays that are over and human steps left unanswered past their node's `timeoutMs` fall due the same way.

use std::time::Duration;

use cairn_store::runs::{self as rows, RunRow};
use cairn_store::{Backend, Store};

use super::convert::run_from_row;
use super::{Runs, processes, timers};
use crate::clock::now_ms;
use crate::definition::NodeType;
use crate::error::Error;

/// How long a running run's claim lasts without renewal.
pub(super) const LEASE_MS: i64 = 30_000;
/// How often a running script's claim is renewed.
const RENEW_EVERY: Duration = Duration::from_secs(10);

/// What has fallen due in a run tree.
#[derive(Debug, Default)]
pub(super) struct Overdue {
    /// Running runs whose process is gone.
    pub(super) lost: Vec<String>,
    /// Delays that are over and human steps past their timeout: (run, paused node run).
    pub(super) timed_out: Vec<(String, String)>,
}

impl Runs {
    /// Marks `row` as held by this process from `now`: its owner, and a lease that lasts [`LEASE_MS`].
    pub(super) fn hold(&self, row: &mut RunRow, now: i64) {
        row.owner_pid = Some(i64::from(self.inner.pid));
        row.lease_expires_at = Some(now + LEASE_MS);
    }

    /// What has fallen due in `tree` (as read): lost runners, delays that are over, and human steps unanswered past
    /// their node's `timeoutMs`.
    pub(super) async fn overdue(&self, tree: &[RunRow]) -> Result<Overdue, Error> {
        let mut due = Overdue::default();
        let mut conn = None;
        for row in tree.iter().filter(|r| r.status == "paused" && r.awaiting_child_run_id.is_none()) {
            let (workflow, _) = self.inner.snapshots.decode(&row.workflow_id, &row.workflow_snapshot)?;
            let Some(node) = row.current_node_id.as_deref().and_then(|id| workflow.node(id)) else {
                continue;
            };
            if node.delay_ms().is_none() && (node.kind != NodeType::Human || node.timeout_ms.is_none()) {
                continue;
            }
            let conn = match &mut conn {
                Some(conn) => conn,
                None => conn.insert(self.inner.store.read().await?),
            };
            let open = rows::open_node_run(conn, &row.id).await?;
            let run = run_from_row(row, open.as_ref(), &self.inner.snapshots)?;
            if let Some(open) = &run.open
                && timers::due_at(&run, open).is_some_and(|at| now_ms() >= at)
            {
                due.timed_out.push((row.id.clone(), open.id.clone()));
            }
        }
        due.lost = tree.iter().filter(|r| self.is_lost(r)).map(|r| r.id.clone()).collect();
        Ok(due)
    }

    /// Whether `row` runs under a process that is gone: another process on this machine that no longer exists
    /// (SQLite: one machine), or whose lease ran out.
    pub(super) fn is_lost(&self, row: &RunRow) -> bool {
        if row.status != "running" {
            return false;
        }
        let now = now_ms();
        match row.owner_pid {
            Some(pid) if pid as u32 == self.inner.pid => false,
            Some(pid) => {
                let dead = self.inner.store.backend() == Backend::Sqlite
                    && processes::process_alive(pid as u32) == Some(false);
                dead || row.lease_expires_at.is_some_and(|t| t < now)
            }
            None => now - row.updated_at > LEASE_MS,
        }
    }
}

/// Renews this process's (`pid`) lease on run `run_id` every [`RENEW_EVERY`] while it works on the run (a script, model
/// calls), until aborted. Once the run is no longer this process's to run (cancelled, perhaps through another node),
/// `on_lost` stops the work and the renewal ends.
pub(super) fn renew(
    store: Store,
    run_id: String,
    pid: i64,
    on_lost: impl FnOnce() + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(RENEW_EVERY).await;
            let Ok(mut tx) = rows::begin(&store).await else { continue };
            let renewed = rows::renew_lease(&mut tx, &run_id, pid, now_ms() + LEASE_MS).await;
            let _ = rows::commit(tx).await;
            if let Ok(false) = renewed {
                on_lost();
                break;
            }
        }
    })
}
