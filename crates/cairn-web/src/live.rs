//! Live run updates: a watcher of a run tree's event log in the database, woken by the store's changes feed
//! ([`cairn_store::changes`]: LISTEN/NOTIFY on Postgres, so a run advanced through any node shows on every node's
//! pages; in-process wake-ups on SQLite). It re-reads only when the feed names its tree, when changes may have been
//! missed, or every [`Changes::fallback_poll`](cairn_store::changes::Changes::fallback_poll) (how other processes'
//! writes to a SQLite file show up). A cheap `COUNT(*)` decides; the log is read only when it grew. Streams end at
//! server shutdown.

use std::collections::HashSet;

use cairn_store::changes::Change;
use cairn_store::observe::{self, EventRow};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use crate::error::ApiError;
use crate::state::Web;

/// Watches the tree of one run; each [`Watcher::changed`] waits for the log to grow.
#[derive(Debug)]
pub(crate) struct Watcher {
    web: Web,
    run_id: String,
    /// The tree's root run, once looked up (the id changes name).
    root: Option<String>,
    count: i64,
    seen: HashSet<(String, i64)>,
    changes: broadcast::Receiver<Change>,
}

impl Watcher {
    /// A watcher of `run_id`'s tree that counts `since` events as already seen (the page rendered them).
    pub(crate) fn new(web: Web, run_id: String, since: i64) -> Watcher {
        // Subscribed before the first read, so no change after that read goes unheard.
        let changes = web.store.changes().subscribe();
        Watcher { web, run_id, root: None, count: since, seen: HashSet::new(), changes }
    }

    /// The number of events the tree has now.
    pub(crate) async fn count(web: &Web, run_id: &str) -> Result<i64, ApiError> {
        let mut conn = web.store.read().await?;
        Ok(observe::tree_event_count(&mut conn, run_id).await?)
    }

    /// Waits until the log has grown past what was seen; `None` at shutdown.
    pub(crate) async fn changed(&mut self) -> Option<Result<(), ApiError>> {
        loop {
            match Watcher::count(&self.web, &self.run_id).await {
                Ok(count) if count != self.count => {
                    self.count = count;
                    return Some(Ok(()));
                }
                Ok(_) => {}
                Err(error) => return Some(Err(error)),
            }
            if self.root.is_none() {
                match self.root_run_id().await {
                    Ok(root) => self.root = root,
                    Err(error) => return Some(Err(error)),
                }
            }
            if !self.wake().await {
                return None;
            }
        }
    }

    /// Waits for a change of this tree, a notice that changes may have been missed, or the fallback poll; `false` at
    /// shutdown.
    async fn wake(&mut self) -> bool {
        let fallback = tokio::time::sleep(self.web.store.changes().fallback_poll());
        tokio::pin!(fallback);
        loop {
            tokio::select! {
                () = self.web.shutdown.cancelled() => return false,
                () = &mut fallback => return true,
                received = self.changes.recv() => match received {
                    Ok(Change::Run(root)) if self.root.as_ref().is_none_or(|mine| *mine == root) => return true,
                    Ok(Change::Unknown) | Err(RecvError::Lagged(_)) => return true,
                    Ok(Change::Run(_) | Change::Item(_)) => {}
                    // The feed outlives every watcher; should it end, the fallback poll still wakes us.
                    Err(RecvError::Closed) => {
                        tokio::select! {
                            () = self.web.shutdown.cancelled() => return false,
                            () = &mut fallback => return true,
                        }
                    }
                },
            }
        }
    }

    /// The root of the watched run's tree.
    async fn root_run_id(&self) -> Result<Option<String>, ApiError> {
        let mut conn = self.web.store.read().await?;
        Ok(observe::root_run_id(&mut conn, &self.run_id).await?)
    }

    /// The events not returned before (all of them the first time), oldest first.
    pub(crate) async fn new_events(&mut self) -> Result<Vec<EventRow>, ApiError> {
        let mut conn = self.web.store.read().await?;
        let all = observe::tree_events(&mut conn, &self.run_id).await?;
        self.count = self.count.max(all.len() as i64);
        Ok(all.into_iter().filter(|e| self.seen.insert((e.run_id.clone(), e.seq))).collect())
    }

    /// The run being watched.
    pub(crate) fn run_id(&self) -> &str {
        &self.run_id
    }
}
