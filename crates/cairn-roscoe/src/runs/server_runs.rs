//! Following server-executed runs from outside their drive: [`Runs::wait_for_run`] waits until a run tree stops
//! running (the command line's way to follow a run it started, or one started elsewhere), and
//! [`Runs::resume_server_runs`] is `cairn serve`'s sweep at start: a server-executed run left `running` by a process
//! that is gone (its lease lost) makes its model calls again, in the background.

use std::time::Duration;

use cairn_store::runs as rows;

use super::{AdvanceResult, Runs};
use crate::engine::Event;
use crate::error::Error;
use crate::scope::Scope;
use super::tree::Tree;

/// How often [`Runs::wait_for_run`] re-reads a run it was not woken for (changes by other processes on SQLite).
const WAIT_POLL: Duration = Duration::from_millis(250);

impl Runs {
    /// Waits until the tree of `run_id` is no longer `running` — completed, failed, cancelled, or paused for a person,
    /// a host or its budget — and returns its result. A run whose calling process is gone is resumed meanwhile.
    pub async fn wait_for_run(&self, scope: &Scope, run_id: &str) -> Result<AdvanceResult, Error> {
        let mut changes = self.store().changes().subscribe();
        loop {
            let tree = self.current_tree(scope, run_id).await?;
            let result = self.result(&tree, scope).await?;
            if result.status != "running" {
                return Ok(result);
            }
            tokio::select! {
                _ = changes.recv() => {}
                () = tokio::time::sleep(WAIT_POLL) => {}
            }
        }
    }

    /// Resumes every server-executed run whose process is gone: its model calls are made again (in the background).
    /// Returns how many were resumed.
    pub async fn resume_server_runs(&self) -> Result<usize, Error> {
        let mut conn = self.store().read().await?;
        let running = rows::running_server_runs(&mut conn).await?;
        drop(conn);
        let lost: Vec<_> = self.overdue(&running).await?.lost;
        let mut resumed = 0;
        for run_id in lost {
            let root = running.iter().find(|r| r.id == run_id).map_or(run_id.clone(), |r| r.root_run_id.clone());
            if self.drive(&run_id, Event::RunnerLost, &mut Tree::unread(&root)).await.is_ok() {
                resumed += 1;
            }
        }
        Ok(resumed)
    }
}
