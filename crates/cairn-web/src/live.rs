//! Live run updates: the run facade's watcher of a run tree's event log
//! ([`TreeWatcher`](cairn_roscoe::runs::observe::TreeWatcher), woken by the database's changes feed, so a run
//! advanced through any node shows on every node's pages), ended at server shutdown.

use cairn_roscoe::runs::observe::{LoggedEvent, TreeWatcher};

use crate::error::ApiError;
use crate::state::Web;

/// Watches the tree of one run; each [`Watcher::changed`] waits for the log to grow.
#[derive(Debug)]
pub(crate) struct Watcher {
    web: Web,
    tree: TreeWatcher,
}

impl Watcher {
    /// A watcher of `run_id`'s tree that counts `since` events as already seen (the page rendered them).
    pub(crate) fn new(web: Web, run_id: String, since: i64) -> Watcher {
        let tree = web.runs.watch_tree(run_id, since);
        Watcher { web, tree }
    }

    /// The number of events the tree has now.
    pub(crate) async fn count(web: &Web, run_id: &str) -> Result<i64, ApiError> {
        Ok(web.runs.tree_event_count(run_id).await?)
    }

    /// Waits until the log has grown past what was seen; `None` at shutdown.
    pub(crate) async fn changed(&mut self) -> Option<Result<(), ApiError>> {
        tokio::select! {
            () = self.web.shutdown.cancelled() => None,
            changed = self.tree.changed() => Some(changed.map_err(ApiError::from)),
        }
    }

    /// The events not returned before (all of them the first time), oldest first.
    pub(crate) async fn new_events(&mut self) -> Result<Vec<LoggedEvent>, ApiError> {
        Ok(self.tree.new_events().await?)
    }

    /// The run being watched.
    pub(crate) fn run_id(&self) -> &str {
        self.tree.run_id()
    }
}
