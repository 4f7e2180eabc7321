//! Work items: the JSON shape every work tool returns (§1.2) and the rules of the state machine (§4, §5) as pure
//! functions from the stored row and the caller to the new row, a no-op, or the error that refuses the change.
//!
//! Who holds an item is its claiming *principal* (the token's), not the free-text claimant name: the name is a label
//! and a comparison key for `work_claim` repeats and `handoff.to`, never a source of rights.

use cairn_store::work::items::ItemRow;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::auth::Caller;
use crate::error::Error;
use crate::text::name_key;
use crate::time::{format_ms, format_opt};

/// The most links an item keeps.
pub(crate) const MAX_LINKS: usize = 10;

/// A work item as the tools return it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkItem {
    /// `wi_…`.
    pub id: String,
    /// The account (the space's).
    pub account_id: String,
    /// The space it is in.
    pub space_id: String,
    /// The document it implements; "" for none.
    pub document_id: String,
    /// Its title.
    pub title: String,
    /// Its notes.
    pub notes: String,
    /// Up to ten URLs.
    pub links: Vec<String>,
    /// `open`, `claimed`, `in_progress`, `blocked` or `done`.
    pub state: String,
    /// Who holds (or, when done, held) it, as they named themselves; "" when open.
    pub claimant: String,
    /// `person`, `agent` or `service`; "" when open.
    pub claimant_kind: String,
    /// When it was claimed; "" when open.
    pub claimed_at: String,
    /// The last hand-off, if any.
    pub handoff: Option<Handoff>,
    /// Who made it, e.g. `Ada (person)`.
    pub created_by: String,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339, the last change.
    pub updated_at: String,
    /// When it became done; "".
    pub done_at: String,
    /// Who marked it done, e.g. `claude-code worker (agent)`; "".
    pub done_by: String,
    /// 0 (most urgent) to 4.
    pub priority: i64,
    /// Short lower-case labels.
    pub labels: Vec<String>,
    /// The parent item; "" for none.
    pub parent_id: String,
    /// The items it waits for (done or not).
    pub blocked_by: Vec<String>,
    /// When the holder's lease runs out unless renewed (`work_heartbeat`); "" for no lease.
    pub lease_expires_at: String,
}

/// A hand-off: what was done and what is left, and whom it is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handoff {
    /// The claimant who handed it off.
    pub from: String,
    /// Whom it is for; "" for anyone.
    pub to: String,
    /// What was done and what is left.
    pub note: String,
    /// RFC 3339.
    pub at: String,
}

impl WorkItem {
    /// The view of a stored row.
    pub(crate) fn from_row(row: &ItemRow) -> WorkItem {
        WorkItem {
            id: row.id.clone(),
            account_id: row.account_id.clone(),
            space_id: row.space_id.clone(),
            document_id: row.document_id.clone(),
            title: row.title.clone(),
            notes: row.notes.clone(),
            links: links(row),
            state: row.state.clone(),
            claimant: row.claimant.clone(),
            claimant_kind: row.claimant_kind.clone(),
            claimed_at: format_opt(row.claimed_at),
            handoff: handoff(row),
            created_by: row.created_by.clone(),
            created_at: format_ms(row.created_at),
            updated_at: format_ms(row.updated_at),
            done_at: format_opt(row.done_at),
            done_by: row.done_by.clone(),
            priority: row.priority,
            labels: list(&row.labels),
            parent_id: row.parent_id.clone(),
            blocked_by: list(&row.blocked_by),
            lease_expires_at: format_opt(row.lease_expires_at),
        }
    }
}

/// The states `work_update` may set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    InProgress,
    Blocked,
    Done,
}

impl Target {
    /// Parses `in_progress`, `blocked` or `done`.
    pub(crate) fn parse(text: &str) -> Result<Target, Error> {
        match text {
            "in_progress" => Ok(Target::InProgress),
            "blocked" => Ok(Target::Blocked),
            "done" => Ok(Target::Done),
            other => Err(Error::InvalidArgument(format!(
                "state '{other}' cannot be set: use in_progress, blocked or done (open and claimed are reached by \
                 work_handoff and work_claim), or leave it empty"
            ))),
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Target::InProgress => "in_progress",
            Target::Blocked => "blocked",
            Target::Done => "done",
        }
    }
}

/// The states an item can be in, for `work_list`'s filter.
pub(crate) const STATES: [&str; 5] = ["open", "claimed", "in_progress", "blocked", "done"];

/// A change a tool asks for, already validated (the blockers and parent also checked against the space: they
/// exist there, and make no cycle).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Changes {
    pub(crate) state: Option<Target>,
    pub(crate) notes: Option<String>,
    pub(crate) links: Vec<String>,
    pub(crate) priority: Option<i64>,
    pub(crate) add_labels: Vec<String>,
    pub(crate) remove_labels: Vec<String>,
    pub(crate) add_blocked_by: Vec<String>,
    pub(crate) remove_blocked_by: Vec<String>,
    /// `Some("")` takes the parent away.
    pub(crate) parent_id: Option<String>,
}

impl Changes {
    /// Whether it changes what the item waits for or its parent (checked against the space's graph).
    pub(crate) fn touches_graph(&self) -> bool {
        !self.add_blocked_by.is_empty() || !self.remove_blocked_by.is_empty() || self.parent_id.is_some()
    }
}

/// The event a change writes to the log: its kind and data.
pub(crate) type Event = (&'static str, serde_json::Value);

fn links(row: &ItemRow) -> Vec<String> {
    list(&row.links)
}

/// A stored JSON list of strings.
pub(crate) fn list(json: &str) -> Vec<String> {
    serde_json::from_str(json).unwrap_or_default()
}

fn to_json(list: &[String]) -> String {
    serde_json::to_string(list).expect("a list of strings serializes")
}

fn handoff(row: &ItemRow) -> Option<Handoff> {
    row.handoff.as_deref().and_then(|h| serde_json::from_str(h).ok())
}

fn is_held(row: &ItemRow) -> bool {
    matches!(row.state.as_str(), "claimed" | "in_progress" | "blocked")
}

fn is_holder(row: &ItemRow, caller: &Caller) -> bool {
    !row.claimant_principal_id.is_empty() && row.claimant_principal_id == caller.principal_id
}

fn item_is_done() -> Error {
    Error::FailedPrecondition("item is done; create a new work item to redo or extend the work".into())
}

/// What an item starts as: open, unclaimed, version 1, created by `created_by` at `now` with the given place and text.
pub(crate) struct NewItem {
    pub id: String,
    pub account_id: String,
    pub space_id: String,
    pub document_id: String,
    pub title: String,
    pub notes: String,
    /// The links as their stored JSON list.
    pub links: String,
    pub priority: i64,
    pub labels: Vec<String>,
    pub parent_id: String,
    pub blocked_by: Vec<String>,
    pub created_by: String,
    pub now: i64,
}

/// A new item's row.
pub(crate) fn open_item(new: NewItem) -> ItemRow {
    ItemRow {
        id: new.id,
        account_id: new.account_id,
        space_id: new.space_id,
        document_id: new.document_id,
        title: new.title,
        notes: new.notes,
        links: new.links,
        state: "open".into(),
        claimant: String::new(),
        claimant_key: String::new(),
        claimant_kind: String::new(),
        claimant_principal_id: String::new(),
        claimed_at: None,
        handoff: None,
        handoff_to_key: String::new(),
        created_by: new.created_by,
        created_at: new.now,
        updated_at: new.now,
        done_at: None,
        done_by: String::new(),
        version: 1,
        priority: new.priority,
        labels: to_json(&new.labels),
        parent_id: new.parent_id,
        blocked_by: to_json(&new.blocked_by),
        lease_expires_at: None,
        lease_ms: 0,
    }
}

fn next(row: &ItemRow, now: i64) -> ItemRow {
    // The clock of another process may lag: a change never moves an item back in time.
    ItemRow { updated_at: now.max(row.updated_at), version: row.version + 1, ..row.clone() }
}

/// `work_claim` by `caller` under the name `claimant`, with a lease of `lease_ms` (0: none): the claimed row, `None`
/// for a repeat by the holder (which renews a lease it asks for, without an event), or the refusal (naming the
/// holder).
pub(crate) fn claim(
    row: &ItemRow,
    caller: &Caller,
    claimant: &str,
    lease_ms: i64,
    now: i64,
) -> Result<Option<(ItemRow, Vec<Event>)>, Error> {
    let key = name_key(claimant);
    match row.state.as_str() {
        "done" => Err(item_is_done()),
        "open" => {
            if !row.handoff_to_key.is_empty() && row.handoff_to_key != key && !caller.is_person() {
                let to = handoff(row).map(|h| h.to).unwrap_or_default();
                return Err(Error::Conflict {
                    message: format!("handed off to \"{to}\"; only they or a person may claim it"),
                    details: json!({"handoff_to": to}),
                });
            }
            let mut new = next(row, now);
            new.state = "claimed".into();
            new.claimant = claimant.to_owned();
            new.claimant_key = key;
            new.claimant_kind = caller.kind.as_str().into();
            new.claimant_principal_id = caller.principal_id.clone();
            new.claimed_at = Some(new.updated_at);
            new.handoff_to_key = String::new();
            new.lease_ms = lease_ms;
            new.lease_expires_at = (lease_ms > 0).then(|| new.updated_at + lease_ms);
            let mut data = json!({"claimant": claimant});
            if let Some(until) = new.lease_expires_at {
                data["lease_expires_at"] = format_ms(until).into();
            }
            Ok(Some((new, vec![("claimed", data)])))
        }
        _ if is_holder(row, caller) && row.claimant_key == key => {
            if lease_ms == 0 {
                return Ok(None);
            }
            let mut new = next(row, now);
            new.lease_ms = lease_ms;
            new.lease_expires_at = Some(new.updated_at + lease_ms);
            Ok(Some((new, Vec::new())))
        }
        _ => {
            let since = format_opt(row.claimed_at);
            Err(Error::Conflict {
                message: format!(
                    "held by \"{}\" ({}) since {since}; ask them to hand it off (work_handoff) rather than working it too",
                    row.claimant, row.claimant_kind
                ),
                details: json!({
                    "holder": row.claimant, "holder_kind": row.claimant_kind, "state": row.state, "claimed_at": since,
                }),
            })
        }
    }
}

/// `work_update`: the changed row and its events (`state_changed`, `notes_changed`, `links_added`, in that order),
/// `None` when nothing changes, or the refusal. Every requested change is checked before any is applied.
pub(crate) fn update(row: &ItemRow, caller: &Caller, changes: &Changes, now: i64) -> Result<Option<(ItemRow, Vec<Event>)>, Error> {
    let holder_or_person = is_holder(row, caller) || caller.is_person();
    let done = row.state == "done";
    let not_claimed = || Error::FailedPrecondition("not claimed; claim it first (work_claim)".into());
    let new_state = match changes.state {
        None => None,
        Some(Target::Done) if done => None,
        Some(_) if done => return Err(item_is_done()),
        Some(Target::Done) if row.state == "open" => {
            if !caller.is_person() {
                return Err(not_claimed());
            }
            Some(Target::Done)
        }
        Some(_) if row.state == "open" => return Err(not_claimed()),
        Some(Target::Done) if !holder_or_person => {
            return Err(Error::PermissionDenied(format!(
                "only its claimant (\"{}\") or a person marks it done",
                row.claimant
            )));
        }
        Some(target) if !holder_or_person => {
            return Err(Error::PermissionDenied(format!(
                "held by \"{}\"; only they or a person may set it {}",
                row.claimant,
                target.as_str()
            )));
        }
        Some(target) if target.as_str() == row.state => None,
        Some(target) => Some(target),
    };
    let new_notes = match &changes.notes {
        Some(notes) if *notes != row.notes => {
            if done && !caller.is_person() {
                return Err(item_is_done());
            }
            if is_held(row) && !holder_or_person {
                return Err(Error::PermissionDenied(format!(
                    "held by \"{}\"; only they or a person may change its notes",
                    row.claimant
                )));
            }
            Some(notes.clone())
        }
        _ => None,
    };
    let mut kept = links(row);
    let added: Vec<String> = changes.links.iter().filter(|l| !kept.contains(l)).cloned().collect();
    if !added.is_empty() {
        if done && !caller.is_person() {
            return Err(item_is_done());
        }
        if kept.len() + added.len() > MAX_LINKS {
            return Err(Error::InvalidArgument(format!(
                "the item keeps at most ten links; it has {} and {} are new",
                kept.len(),
                added.len()
            )));
        }
    }
    let coordination = coordination(row, changes);
    if !coordination.is_empty() {
        if done && !caller.is_person() {
            return Err(item_is_done());
        }
        if is_held(row) && !holder_or_person {
            return Err(Error::PermissionDenied(format!(
                "held by \"{}\"; only they or a person may change its priority, labels, blockers or parent",
                row.claimant
            )));
        }
    }
    if new_state.is_none() && new_notes.is_none() && added.is_empty() && coordination.is_empty() {
        return Ok(None);
    }
    let mut new = next(row, now);
    let mut events = Vec::new();
    if let Some(target) = new_state {
        new.state = target.as_str().into();
        if target == Target::Done {
            new.done_at = Some(new.updated_at);
            new.done_by = if is_holder(row, caller) {
                format!("{} ({})", row.claimant, row.claimant_kind)
            } else {
                caller.label()
            };
        }
        events.push(("state_changed", json!({"from": row.state, "to": target.as_str()})));
    }
    if let Some(notes) = new_notes {
        new.notes = notes;
        events.push(("notes_changed", json!({"notes": new.notes})));
    }
    if !added.is_empty() {
        kept.extend(added.iter().cloned());
        new.links = serde_json::to_string(&kept).expect("a list of strings serializes");
        events.push(("links_added", json!({"links": added})));
    }
    for change in coordination {
        events.push(change.apply(&mut new));
    }
    if new.state == "done" {
        new.lease_expires_at = None;
        new.lease_ms = 0;
    } else if is_holder(row, caller) && row.lease_ms > 0 {
        new.lease_expires_at = Some(new.updated_at + row.lease_ms);
    }
    Ok(Some((new, events)))
}

/// `work_heartbeat` by `caller` as `claimant`: the row with its lease renewed (no event; unchanged without a
/// lease), or the refusal when someone else holds it or nobody does.
pub(crate) fn heartbeat(row: &ItemRow, caller: &Caller, claimant: &str, now: i64) -> Result<Option<(ItemRow, Vec<Event>)>, Error> {
    if row.state == "done" {
        return Err(item_is_done());
    }
    if !is_held(row) {
        return Err(Error::FailedPrecondition(
            "nobody holds it (a lease that ran out opens the item again); claim it again (work_claim)".into(),
        ));
    }
    if !is_holder(row, caller) || row.claimant_key != name_key(claimant) {
        return Err(Error::Conflict {
            message: format!("held by \"{}\" ({}), not by you; only the holder renews its lease", row.claimant, row.claimant_kind),
            details: json!({"holder": row.claimant, "holder_kind": row.claimant_kind, "state": row.state}),
        });
    }
    if row.lease_ms == 0 {
        return Ok(None);
    }
    let mut new = next(row, now);
    new.lease_expires_at = Some(new.updated_at + row.lease_ms);
    Ok(Some((new, Vec::new())))
}

/// The lease sweeper's change: the row open again with nobody holding it if its lease ran out before `now`, and the
/// event that says so; `None` when it did not (renewed, handed off or done meanwhile).
pub(crate) fn expire(row: &ItemRow, now: i64) -> Option<(ItemRow, Vec<Event>)> {
    let until = row.lease_expires_at.filter(|until| *until < now && is_held(row))?;
    let since = format_opt(row.claimed_at);
    let mut new = next(row, now);
    new.state = "open".into();
    release(&mut new);
    let message = format!("lease expired: held by {} since {since}", row.claimant);
    let data = json!({"message": message, "claimant": row.claimant, "since": since, "expired_at": format_ms(until)});
    Some((new, vec![("lease_expired", data)]))
}

/// Clears who holds `row` and their lease.
fn release(row: &mut ItemRow) {
    row.claimant = String::new();
    row.claimant_key = String::new();
    row.claimant_kind = String::new();
    row.claimant_principal_id = String::new();
    row.claimed_at = None;
    row.lease_expires_at = None;
    row.lease_ms = 0;
}

/// One change of an item's priority, labels, blockers or parent.
enum Coordination {
    Priority { from: i64, to: i64 },
    Labels { labels: Vec<String>, added: Vec<String>, removed: Vec<String> },
    Blockers { blocked_by: Vec<String>, added: Vec<String>, removed: Vec<String> },
    Parent { from: String, to: String },
}

impl Coordination {
    /// Applies it to `row`: its event.
    fn apply(self, row: &mut ItemRow) -> Event {
        match self {
            Coordination::Priority { from, to } => {
                row.priority = to;
                ("priority_changed", json!({"from": from, "to": to}))
            }
            Coordination::Labels { labels, added, removed } => {
                row.labels = to_json(&labels);
                ("labels_changed", json!({"added": added, "removed": removed}))
            }
            Coordination::Blockers { blocked_by, added, removed } => {
                row.blocked_by = to_json(&blocked_by);
                ("blockers_changed", json!({"added": added, "removed": removed}))
            }
            Coordination::Parent { from, to } => {
                row.parent_id.clone_from(&to);
                ("parent_changed", json!({"from": from, "to": to}))
            }
        }
    }
}

/// What of `changes`' priority, labels, blockers and parent really changes `row`.
fn coordination(row: &ItemRow, changes: &Changes) -> Vec<Coordination> {
    let mut out = Vec::new();
    if let Some(to) = changes.priority.filter(|p| *p != row.priority) {
        out.push(Coordination::Priority { from: row.priority, to });
    }
    let edit = |old: Vec<String>, add: &[String], remove: &[String]| {
        let removed: Vec<String> = old.iter().filter(|v| remove.contains(v)).cloned().collect();
        let mut new: Vec<String> = old.iter().filter(|v| !remove.contains(v)).cloned().collect();
        let added: Vec<String> = add.iter().filter(|v| !old.contains(v) && !remove.contains(v)).cloned().collect();
        new.extend(added.iter().cloned());
        (new, added, removed)
    };
    let (labels, added, removed) = edit(list(&row.labels), &changes.add_labels, &changes.remove_labels);
    if !added.is_empty() || !removed.is_empty() {
        out.push(Coordination::Labels { labels, added, removed });
    }
    let (blocked_by, added, removed) = edit(list(&row.blocked_by), &changes.add_blocked_by, &changes.remove_blocked_by);
    if !added.is_empty() || !removed.is_empty() {
        out.push(Coordination::Blockers { blocked_by, added, removed });
    }
    if let Some(to) = changes.parent_id.as_ref().filter(|p| **p != row.parent_id) {
        out.push(Coordination::Parent { from: row.parent_id.clone(), to: to.clone() });
    }
    out
}

/// The event on an item whose last unfinished blocker, `blocker_id`, is now done: it became ready (if open).
pub(crate) fn unblocked(row: &ItemRow, blocker_id: &str, now: i64) -> (ItemRow, Event) {
    (next(row, now), ("unblocked", json!({"last_blocker": blocker_id})))
}

/// `work_handoff`: the reopened row, or the refusal.
pub(crate) fn handoff_item(row: &ItemRow, caller: &Caller, note: &str, to: &str, now: i64) -> Result<(ItemRow, Event), Error> {
    match row.state.as_str() {
        "open" => return Err(Error::FailedPrecondition("not held; nothing to hand off".into())),
        "done" => return Err(item_is_done()),
        _ => {}
    }
    if !is_holder(row, caller) && !caller.is_person() {
        return Err(Error::PermissionDenied(format!(
            "held by \"{}\"; only they or a person may hand it off",
            row.claimant
        )));
    }
    let mut new = next(row, now);
    let handoff = Handoff { from: row.claimant.clone(), to: to.to_owned(), note: note.to_owned(), at: format_ms(new.updated_at) };
    new.state = "open".into();
    release(&mut new);
    new.handoff = Some(serde_json::to_string(&handoff).expect("a hand-off serializes"));
    new.handoff_to_key = name_key(to);
    let event = ("handed_off", json!({"from": handoff.from, "to": handoff.to, "note": handoff.note}));
    Ok((new, event))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Kind;

    fn caller(id: &str, kind: Kind) -> Caller {
        Caller {
            principal_id: id.into(),
            display_name: id.into(),
            kind,
            home_account_id: "acc".into(),
            scopes: Vec::new(),
        }
    }

    fn open() -> ItemRow {
        open_item(NewItem {
            id: "wi_1".into(),
            account_id: "acc".into(),
            space_id: "sp".into(),
            document_id: String::new(),
            title: "t".into(),
            notes: String::new(),
            links: "[]".into(),
            priority: 2,
            labels: Vec::new(),
            parent_id: String::new(),
            blocked_by: Vec::new(),
            created_by: "Ada (person)".into(),
            now: 1,
        })
    }

    fn check_claim(row: &ItemRow, who: &Caller, name: &str) -> Result<Option<ItemRow>, Error> {
        claim(row, who, name, 0, 10).map(|o| o.map(|(row, _)| row))
    }

    #[test]
    fn claim_then_repeat_then_someone_else() {
        let agent = caller("a", Kind::Agent);
        let claimed = check_claim(&open(), &agent, "Worker  One").unwrap().unwrap();
        assert_eq!((claimed.state.as_str(), claimed.version, claimed.claimed_at), ("claimed", 2, Some(10)));
        assert!(check_claim(&claimed, &agent, "worker one").unwrap().is_none());
        let err = check_claim(&claimed, &caller("b", Kind::Agent), "other").unwrap_err();
        assert_eq!(err.code(), "conflict");
        assert!(err.to_string().starts_with("held by \"Worker  One\" (agent) since 1970-01-01T00:00:00.010Z"), "{err}");
        // A person does not override a holder either.
        assert_eq!(check_claim(&claimed, &caller("p", Kind::Person), "Ada").unwrap_err().code(), "conflict");
    }

    #[test]
    fn handoff_to_someone_is_enforced_for_agents_only() {
        let agent = caller("a", Kind::Agent);
        let claimed = check_claim(&open(), &agent, "w1").unwrap().unwrap();
        let (reopened, _) = handoff_item(&claimed, &agent, "done half", "Worker 2", 20).unwrap();
        assert_eq!((reopened.state.as_str(), reopened.claimant.as_str()), ("open", ""));
        assert_eq!(check_claim(&reopened, &agent, "w3").unwrap_err().code(), "conflict");
        assert!(check_claim(&reopened, &caller("b", Kind::Agent), "worker 2").unwrap().is_some());
        assert!(check_claim(&reopened, &caller("p", Kind::Person), "Ada").unwrap().is_some());
        assert_eq!(handoff_item(&reopened, &agent, "x", "", 30).unwrap_err().code(), "failed_precondition");
    }

    #[test]
    fn done_is_for_the_holder_or_a_person() {
        let agent = caller("a", Kind::Agent);
        let claimed = check_claim(&open(), &agent, "w1").unwrap().unwrap();
        let done = Changes { state: Some(Target::Done), ..Changes::default() };
        let err = update(&claimed, &caller("b", Kind::Agent), &done, 20).unwrap_err();
        assert_eq!(err.to_string(), "only its claimant (\"w1\") or a person marks it done");
        let (by_person, events) = update(&claimed, &caller("p", Kind::Person), &done, 20).unwrap().unwrap();
        assert_eq!((by_person.done_by.as_str(), events[0].0), ("p (person)", "state_changed"));
        let (by_holder, _) = update(&claimed, &agent, &done, 20).unwrap().unwrap();
        assert_eq!(by_holder.done_by, "w1 (agent)");
        assert!(update(&by_holder, &agent, &done, 30).unwrap().is_none(), "done again is a no-op");
        assert_eq!(update(&open(), &agent, &done, 20).unwrap_err().code(), "failed_precondition");
        assert!(update(&open(), &caller("p", Kind::Person), &done, 20).unwrap().is_some());
    }

    #[test]
    fn links_are_added_up_to_ten() {
        let agent = caller("a", Kind::Agent);
        let mut row = open();
        row.links = serde_json::to_string(&(0..9).map(|i| format!("http://x/{i}")).collect::<Vec<_>>()).unwrap();
        let two = Changes { links: vec!["http://x/0".into(), "http://y".into(), "http://z".into()], ..Changes::default() };
        let err = update(&row, &agent, &two, 5).unwrap_err();
        assert_eq!(err.to_string(), "the item keeps at most ten links; it has 9 and 2 are new");
        let one = Changes { links: vec!["http://x/0".into(), "http://y".into()], ..Changes::default() };
        let (new, events) = update(&row, &agent, &one, 5).unwrap().unwrap();
        assert_eq!((links(&new).len(), events.len()), (10, 1));
    }
}
