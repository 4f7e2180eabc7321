//! Watching runs from outside the run tools (the web UI's live pages and workspace switcher): the projects that have
//! runs, and a [`TreeWatcher`] over one run tree's event log, woken by the store's changes feed (LISTEN/NOTIFY on
//! Postgres, so a run advanced through any node shows on every node's pages; in-process wake-ups on SQLite). It
//! re-reads only when the feed names its tree, when changes may have been missed, or every
//! [`Changes::fallback_poll`](cairn_store::changes::Changes::fallback_poll) (how other processes' writes to a SQLite
//! file show up). A cheap count decides; the log is read only when it grew. Nothing here writes.

use std::collections::HashSet;

use cairn_store::changes::Change;
use cairn_store::observe;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use super::Runs;
use crate::error::Error;

/// A project runs were started in (a project becomes known when a run starts there), with its top-level run count.
pub use cairn_store::observe::ProjectRow as KnownProject;

/// One entry of a run tree's event log.
pub use cairn_store::observe::EventRow as LoggedEvent;

impl Runs {
    /// Every project runs were started in, most recently used first, with its top-level run count.
    pub async fn known_projects(&self) -> Result<Vec<KnownProject>, Error> {
        let mut conn = self.store().read().await?;
        Ok(observe::projects(&mut conn).await?)
    }

    /// How many top-level runs were started in the global namespace.
    pub async fn global_run_count(&self) -> Result<i64, Error> {
        let mut conn = self.store().read().await?;
        Ok(observe::global_run_count(&mut conn).await?)
    }

    /// How many events the tree of `run_id` has logged (0 for an unknown run).
    pub async fn tree_event_count(&self, run_id: &str) -> Result<i64, Error> {
        let mut conn = self.store().read().await?;
        Ok(observe::tree_event_count(&mut conn, run_id).await?)
    }

    /// A watcher of `run_id`'s tree that counts `since` events as already seen (a page rendered them).
    pub fn watch_tree(&self, run_id: String, since: i64) -> TreeWatcher {
        // Subscribed before the first read, so no change after that read goes unheard.
        let changes = self.store().changes().subscribe();
        TreeWatcher { runs: self.clone(), run_id, root: None, count: since, seen: HashSet::new(), changes }
    }
}

/// Watches the event log of one run tree; each [`TreeWatcher::changed`] waits for the log to grow.
#[derive(Debug)]
pub struct TreeWatcher {
    runs: Runs,
    run_id: String,
    /// The tree's root run, once looked up (the id changes name).
    root: Option<String>,
    count: i64,
    seen: HashSet<(String, i64)>,
    changes: broadcast::Receiver<Change>,
}

impl TreeWatcher {
    /// Waits until the log has grown past what was seen. Cancel-safe: dropped while waiting, it loses nothing.
    pub async fn changed(&mut self) -> Result<(), Error> {
        loop {
            let count = self.runs.tree_event_count(&self.run_id).await?;
            if count != self.count {
                self.count = count;
                return Ok(());
            }
            if self.root.is_none() {
                let mut conn = self.runs.store().read().await?;
                self.root = observe::root_run_id(&mut conn, &self.run_id).await?;
            }
            self.wake().await;
        }
    }

    /// Waits for a change of this tree, a notice that changes may have been missed, or the fallback poll.
    async fn wake(&mut self) {
        let fallback = tokio::time::sleep(self.runs.store().changes().fallback_poll());
        tokio::pin!(fallback);
        loop {
            tokio::select! {
                () = &mut fallback => return,
                received = self.changes.recv() => match received {
                    Ok(Change::Run(root)) if self.root.as_ref().is_none_or(|mine| *mine == root) => return,
                    Ok(Change::Unknown) | Err(RecvError::Lagged(_)) => return,
                    Ok(Change::Run(_) | Change::Item(_) | Change::Token(_)) => {}
                    // The feed outlives every watcher; should it end, the fallback poll still wakes us.
                    Err(RecvError::Closed) => return (&mut fallback).await,
                },
            }
        }
    }

    /// The events not returned before (all of them the first time), oldest first.
    pub async fn new_events(&mut self) -> Result<Vec<LoggedEvent>, Error> {
        let mut conn = self.runs.store().read().await?;
        let all = observe::tree_events(&mut conn, &self.run_id).await?;
        self.count = self.count.max(all.len() as i64);
        Ok(all.into_iter().filter(|e| self.seen.insert((e.run_id.clone(), e.seq))).collect())
    }

    /// The run being watched.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }
}
