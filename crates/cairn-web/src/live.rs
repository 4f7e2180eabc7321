//! Live run updates: a watcher that polls the database's event log of a run tree, so changes made by any process
//! sharing the database (an MCP client advancing the run through another server, a script finishing) show up.
//! A cheap `COUNT(*)` is polled; the log is read only when it grew. Streams end at server shutdown.

use std::collections::HashSet;
use std::time::Duration;

use cairn_store::observe::{self, EventRow};

use crate::error::ApiError;
use crate::state::Web;

/// How often the event log is polled.
const POLL: Duration = Duration::from_millis(300);

/// Watches the tree of one run; each [`Watcher::changed`] waits for the log to grow.
#[derive(Debug)]
pub(crate) struct Watcher {
    web: Web,
    run_id: String,
    count: i64,
    seen: HashSet<(String, i64)>,
}

impl Watcher {
    /// A watcher of `run_id`'s tree that counts `since` events as already seen (the page rendered them).
    pub(crate) fn new(web: Web, run_id: String, since: i64) -> Watcher {
        Watcher { web, run_id, count: since, seen: HashSet::new() }
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
            tokio::select! {
                () = self.web.shutdown.cancelled() => return None,
                () = tokio::time::sleep(POLL) => {}
            }
        }
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
