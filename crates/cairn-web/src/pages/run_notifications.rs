//! The run page's Notifications section: each notification the run (or, for a top-level run, its tree) sent to the
//! operator's `notify:` targets — the target's host only, its event and how it stands — and every attempt with its
//! time and the HTTP status or error it got. Read once with the page; it is not part of the live part.

use cairn_roscoe::runs::Delivery;

use super::PageError;
use crate::state::Web;
use crate::when::Moment;
use crate::workspace::Workspace;

/// One delivery as the page shows it.
#[derive(Debug, Clone)]
pub(super) struct NotificationView {
    pub(super) id: String,
    /// The run it is about, when that is a child of the page's run ("" for the run itself).
    pub(super) child_run_id: String,
    pub(super) event: String,
    pub(super) host: String,
    pub(super) status: String,
    /// The run status colour that matches it: waiting, completed or failed.
    pub(super) colour: &'static str,
    /// When the next attempt is due, while pending.
    pub(super) next: Option<Moment>,
    pub(super) attempts: Vec<AttemptView>,
}

/// One attempt.
#[derive(Debug, Clone)]
pub(super) struct AttemptView {
    pub(super) number: i64,
    pub(super) at: Moment,
    /// `HTTP 200`, `HTTP 500`, or the error.
    pub(super) outcome: String,
    pub(super) ok: bool,
}

impl NotificationView {
    fn of(delivery: Delivery, run_id: &str) -> NotificationView {
        NotificationView {
            child_run_id: if delivery.run_id == run_id { String::new() } else { delivery.run_id },
            next: delivery.next_at.as_deref().map(Moment::of),
            attempts: delivery
                .attempts
                .into_iter()
                .map(|a| AttemptView {
                    number: a.number,
                    at: Moment::of(&a.at),
                    ok: a.error.is_none() && a.http_status.is_some_and(|s| (200..300).contains(&s)),
                    outcome: match (a.http_status, a.error) {
                        (_, Some(error)) => error,
                        (Some(status), None) => format!("HTTP {status}"),
                        (None, None) => "no answer".to_owned(),
                    },
                })
                .collect(),
            id: delivery.id,
            event: delivery.event,
            host: delivery.host,
            colour: match delivery.status.as_str() {
                "delivered" => "status-completed",
                "pending" => "status-paused",
                _ => "status-failed",
            },
            status: delivery.status.replace('_', " "),
        }
    }
}

/// The notifications of run `run_id`, through the run facade.
pub(super) async fn of_run(web: &Web, ws: &Workspace, run_id: &str) -> Result<Vec<NotificationView>, PageError> {
    let found = web.runs.notifications(&ws.scope, run_id).await?;
    Ok(found.into_iter().map(|d| NotificationView::of(d, run_id)).collect())
}
