//! What a board card says about an item besides its own fields: the evidence recorded for the pull requests it links
//! to, the unfinished items it waits for ("blocked by 2", each linked), and, for a held item with a lease, the time
//! left ("lease: 4m 10s left"). The time left is worked out on the server from `lease_expires_at` and now, so the
//! pages need no script for it; the live refresh re-renders it.
//!
//! It decides nothing itself: which blockers are unfinished is what the facade's `item_refs` says of them.

use std::collections::HashMap;

use cairn_work::{Caller, LinkedPullRequest, WorkItem};
use chrono::{DateTime, Utc};

use super::super::PageError;
use crate::state::Web;
use crate::when::Moment;

/// An item, the evidence about the pull requests it links to, what it waits for and its lease.
pub(crate) struct Card {
    pub(crate) item: WorkItem,
    /// Since when its claimant holds it.
    pub(crate) held: Moment,
    pub(crate) pulls: Vec<Pull>,
    /// The unfinished items it waits for (none once it is done).
    pub(crate) waits_for: Vec<Blocker>,
    pub(crate) lease: Option<Lease>,
}

/// One linked pull request: `owner/name#N` and what is recorded about it.
pub(crate) struct Pull {
    pub(crate) name: String,
    pub(crate) records: Vec<Record>,
}

/// One merged or rolled record, as a card shows it.
pub(crate) struct Record {
    pub(crate) kind: String,
    pub(crate) service: String,
    pub(crate) commit: String,
    pub(crate) short_commit: String,
    pub(crate) at: Moment,
    pub(crate) recorded_by: String,
    pub(crate) recorded_at: Moment,
}

/// An unfinished item another one waits for.
#[derive(Debug, Clone)]
pub(crate) struct Blocker {
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) state: String,
}

/// The lease of a held item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lease {
    /// When it runs out unless renewed (RFC 3339, as the item gives it).
    pub(crate) expires_at: String,
    /// "4m 10s left", or "ran out" before the server's sweep reopens the item.
    pub(crate) left: String,
}

impl Lease {
    /// The lease of `item` at `now`; `None` when nobody holds it or the claim has no lease.
    pub(crate) fn at(item: &WorkItem, now: DateTime<Utc>) -> Option<Lease> {
        if !matches!(item.state.as_str(), "claimed" | "in_progress" | "blocked") {
            return None;
        }
        let until = DateTime::parse_from_rfc3339(&item.lease_expires_at).ok()?;
        let ms = (until.with_timezone(&Utc) - now).num_milliseconds();
        let left = if ms > 0 { format!("{} left", left(ms)) } else { "ran out".to_owned() };
        Some(Lease { expires_at: item.lease_expires_at.clone(), left })
    }
}

/// A time left of `ms` (more than 0), rounded up to the second: "3d 4h", "1h 5m", "4m 10s", "42s".
fn left(ms: i64) -> String {
    let seconds = (ms + 999) / 1000;
    let (days, hours, minutes) = (seconds / 86_400, seconds % 86_400 / 3600, seconds % 3600 / 60);
    let seconds = seconds % 60;
    match (days, hours, minutes) {
        (0, 0, 0) => format!("{seconds}s"),
        (0, 0, _) => format!("{minutes}m {seconds}s"),
        (0, _, _) => format!("{hours}h {minutes}m"),
        _ => format!("{days}d {hours}h"),
    }
}

fn pull(linked: LinkedPullRequest) -> Pull {
    let records = linked
        .records
        .into_iter()
        .map(|r| Record {
            short_commit: r.evidence.commit.chars().take(12).collect(),
            kind: r.evidence.kind,
            service: r.evidence.service,
            commit: r.evidence.commit,
            at: Moment::of(&r.evidence.at),
            recorded_by: r.recorded_by,
            recorded_at: Moment::of(&r.evidence.recorded_at),
        })
        .collect();
    Pull { name: format!("{}#{}", linked.repository, linked.number), records }
}

/// The cards of `items` (of the caller's account): the evidence about their pull requests read in one go, and the
/// items the cards wait for read once each.
pub(crate) async fn cards(
    web: &Web,
    caller: &Caller,
    items: Vec<WorkItem>,
) -> Result<Vec<Card>, PageError> {
    let evidence = web.work.items_evidence(caller, &items).await?;
    let waited_for: Vec<String> =
        items.iter().filter(|item| item.state != "done").flat_map(|item| item.blocked_by.iter().cloned()).collect();
    let unfinished: HashMap<String, Blocker> = web
        .work
        .item_refs(caller, &waited_for)
        .await?
        .into_iter()
        .filter(|blocker| blocker.state != "done")
        .map(|b| (b.id.clone(), Blocker { id: b.id, title: b.title, state: b.state }))
        .collect();
    let now = Utc::now();
    let cards = items
        .into_iter()
        .zip(evidence)
        .map(|(item, pulls)| {
            let waits_for = match item.state.as_str() {
                "done" => Vec::new(),
                _ => item.blocked_by.iter().filter_map(|id| unfinished.get(id).cloned()).collect(),
            };
            Card {
                held: Moment::of(&item.claimed_at),
                lease: Lease::at(&item, now),
                pulls: pulls.into_iter().map(pull).collect(),
                waits_for,
                item,
            }
        })
        .collect();
    Ok(cards)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(state: &str, expires_at: &str, now: &str) -> Option<String> {
        let item = WorkItem {
            id: "wi_1".into(),
            account_id: String::new(),
            space_id: String::new(),
            document_id: String::new(),
            title: String::new(),
            notes: String::new(),
            links: Vec::new(),
            state: state.into(),
            claimant: String::new(),
            claimant_kind: String::new(),
            claimed_at: String::new(),
            handoff: None,
            created_by: String::new(),
            created_at: String::new(),
            updated_at: String::new(),
            done_at: String::new(),
            done_by: String::new(),
            priority: 2,
            labels: Vec::new(),
            parent_id: String::new(),
            blocked_by: Vec::new(),
            lease_expires_at: expires_at.into(),
        };
        let now = DateTime::parse_from_rfc3339(now).unwrap().with_timezone(&Utc);
        Lease::at(&item, now).map(|lease| lease.left)
    }

    #[test]
    fn the_time_left_on_a_lease_reads_as_people_say_it() {
        let until = "2026-03-01T12:00:00.000Z";
        assert_eq!(check("claimed", until, "2026-03-01T11:55:50Z").as_deref(), Some("4m 10s left"));
        assert_eq!(check("in_progress", until, "2026-03-01T11:59:59.500Z").as_deref(), Some("1s left"));
        assert_eq!(check("blocked", until, "2026-03-01T10:54:30Z").as_deref(), Some("1h 5m left"));
        assert_eq!(check("claimed", until, "2026-02-26T08:00:00Z").as_deref(), Some("3d 4h left"));
        assert_eq!(check("claimed", until, "2026-03-01T12:00:01Z").as_deref(), Some("ran out"));
        assert_eq!(check("claimed", "", "2026-03-01T12:00:01Z"), None, "no lease");
        assert_eq!(check("open", until, "2026-03-01T11:00:00Z"), None, "nobody holds it");
    }
}
