//! Outbound run notifications: when a run needs a person, completes, fails or stops on its budget, cairn POSTs a
//! signed notification to the targets the global `roscoe.yaml` names ([`targets`]). The step that moves the run
//! queues one delivery per target in its own transaction ([`outbox`]); every server of the database sends what is
//! due, retrying with backoff for a day ([`deliver`]); the run page lists each delivery and its attempts
//! ([`Runs::notifications`]).

mod deliver;
mod outbox;
pub(crate) mod targets;

use cairn_store::runs as rows;

use super::Runs;
use crate::clock::rfc3339;
use crate::error::Error;
use crate::scope::Scope;

pub use deliver::EVENT_HEADER;

/// One notification of a run, as people read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// Its id (`X-Roscoe-Delivery`, the same on every attempt).
    pub id: String,
    /// The run it is about (the run itself, or a run of its tree).
    pub run_id: String,
    /// `run.paused_for_human`, `run.completed`, `run.failed` or `run.budget_exceeded`.
    pub event: String,
    /// The target's `host[:port]` (its path may hold a token, so it is not shown).
    pub host: String,
    /// `pending`, `delivered` or `given_up`.
    pub status: String,
    /// When the next attempt is due (RFC 3339), while pending.
    pub next_at: Option<String>,
    /// Its attempts so far, first first.
    pub attempts: Vec<DeliveryAttempt>,
}

/// One attempt at a [`Delivery`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryAttempt {
    /// 1 for the first.
    pub number: i64,
    /// When it ended (RFC 3339).
    pub at: String,
    /// The HTTP status the target answered, when it answered.
    pub http_status: Option<i64>,
    /// Why it failed without an answer.
    pub error: Option<String>,
}

impl Runs {
    /// The notifications of run `run_id` (in `scope`): its own, and for a top-level run those of its whole tree,
    /// oldest first.
    pub async fn notifications(&self, scope: &Scope, run_id: &str) -> Result<Vec<Delivery>, Error> {
        self.load_scoped(scope, run_id).await?;
        let mut conn = self.inner.store.read().await?;
        let found = rows::notifications_of_run(&mut conn, run_id).await?;
        Ok(found
            .into_iter()
            .map(|(row, attempts)| Delivery {
                host: deliver::host_of(&row.queued.url),
                id: row.queued.id,
                run_id: row.queued.run_id,
                event: row.queued.event,
                next_at: (row.status == "pending").then(|| rfc3339(row.next_at)),
                status: row.status,
                attempts: attempts
                    .into_iter()
                    .map(|a| DeliveryAttempt {
                        number: a.attempt,
                        at: rfc3339(a.at),
                        http_status: a.http_status,
                        error: a.error,
                    })
                    .collect(),
            })
            .collect())
    }
}
