//! One work item's page (`/work/items/{id}`: the item with its priority, labels, lease time left, the items it waits
//! for and those that wait for it, its parent and children, each linked; its whole history from `work_events` with
//! humanised times; and what a person can do with it) and the forms that change an item from the board or that page —
//! hand off (`work_handoff`), and a new state: in progress, blocked or done (`work_update`) — through the same facade
//! calls as the work tools, as the signed-in principal.

use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use cairn_work::{Caller, Error, ItemRef, WORK_READ, WORK_WRITE, WorkItem};
use chrono::Utc;
use serde::Deserialize;
use serde_json::Value;

use super::signin::work_caller;
use super::work::card::Lease;
use super::{Layout, PageError, check_csrf, html, Visit};
use crate::state::Web;
use crate::when::Moment;
use crate::workspace::Workspace;

/// One entry of the history as the page shows it.
struct Entry {
    at: Moment,
    by: String,
    kind: String,
    what: String,
    /// The note, notes or message that came with it; "".
    note: String,
}

#[derive(Template)]
#[template(path = "work/item.html")]
struct ItemPage {
    layout: Layout,
    item: WorkItem,
    created: Moment,
    lease: Option<Lease>,
    /// How many of its blockers are not done.
    waiting: usize,
    blockers: Vec<ItemRef>,
    blocks: Vec<ItemRef>,
    /// Its parent (only the id when it cannot be read).
    parent: Option<ItemRef>,
    children: Vec<ItemRef>,
    history: Vec<Entry>,
}

/// `?account=`: the item's account ("" is the caller's own).
#[derive(Debug, Deserialize)]
pub(crate) struct AccountParam {
    #[serde(default)]
    account: String,
}

/// What an event did, in words, and the note that came with it ("" for none).
fn what(kind: &str, data: &Value) -> (String, String) {
    let s = |key: &str| data[key].as_str().unwrap_or_default().to_owned();
    let list = |key: &str| {
        data[key].as_array().into_iter().flatten().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")
    };
    let plain = |what: String| (what, String::new());
    match kind {
        "created" => match list("blocked_by").as_str() {
            "" => plain("created it".to_owned()),
            ids => plain(format!("created it, waiting for {ids}")),
        },
        "claimed" => match s("lease_expires_at").as_str() {
            "" => plain(format!("claimed it as {}", s("claimant"))),
            until => plain(format!("claimed it as {} with a lease until {until}", s("claimant"))),
        },
        "state_changed" => plain(format!("moved it from {} to {}", s("from"), s("to"))),
        "notes_changed" => ("set the notes".to_owned(), s("notes")),
        "links_added" => plain(format!("added links: {}", list("links"))),
        "handed_off" => match s("to").as_str() {
            "" => ("handed it off".to_owned(), s("note")),
            to => (format!("handed it off to {to}"), s("note")),
        },
        "lease_expired" => (format!("ended the lease of {}: it is open again", s("claimant")), s("message")),
        "unblocked" => plain(format!("its last blocker ({}) is done", s("last_blocker"))),
        "priority_changed" => plain(format!("changed the priority from P{} to P{}", data["from"], data["to"])),
        "labels_changed" => plain(edit("labels", &list("added"), &list("removed"))),
        "blockers_changed" => plain(edit("blockers", &list("added"), &list("removed"))),
        "parent_changed" => match s("to").as_str() {
            "" => plain(format!("took it out of {}", s("from"))),
            to => plain(format!("put it under {to}")),
        },
        "evidence" => {
            let record = |key: &str| data["evidence"][key].as_str().unwrap_or_default().to_owned();
            let to = match record("service").as_str() {
                "" => String::new(),
                service => format!(" to {service}"),
            };
            let commit: String = record("commit").chars().take(12).collect();
            let pull = format!("{}#{}", s("repository"), data["pull_request"]);
            plain(format!("recorded {pull} {}{to} at {commit}", record("kind")))
        }
        other => (other.to_owned(), data.to_string()),
    }
}

/// "added labels a, b; removed c".
fn edit(what: &str, added: &str, removed: &str) -> String {
    match (added, removed) {
        (added, "") => format!("added {what} {added}"),
        ("", removed) => format!("removed {what} {removed}"),
        (added, removed) => format!("added {what} {added}; removed {removed}"),
    }
}

/// `GET /work/items/{id}?account=`.
pub(crate) async fn page(
    State(web): State<Web>,
    visit: Visit,
    Path(id): Path<String>,
    Query(q): Query<AccountParam>,
) -> Result<Response, PageError> {
    let caller = work_caller(&web, &visit, "work_list", &WORK_READ).await?;
    let found = web.work.item_history(&caller, &q.account, &id).await?;
    let history = found
        .events
        .iter()
        .map(|e| {
            let (what, note) = what(&e.kind, &e.data);
            Entry { at: Moment::of(&e.at), by: e.by.clone(), kind: e.kind.clone(), what, note }
        })
        .collect();
    let parent = parent(&web, &caller, &q.account, &found.item.parent_id).await?;
    let layout = Layout::new(&web, &visit, &Workspace::global()).await?;
    let page = ItemPage {
        layout: layout.clone(),
        created: Moment::of(&found.item.created_at),
        lease: Lease::at(&found.item, Utc::now()),
        waiting: found.blockers.iter().filter(|b| b.state != "done").count(),
        blockers: found.blockers,
        blocks: found.blocks,
        parent,
        children: found.children,
        history,
        item: found.item,
    };
    Ok(html(&page))
}

/// The item `id` of `account` as a reference (`None` for ""; only its id when it is gone).
async fn parent(web: &Web, caller: &Caller, account: &str, id: &str) -> Result<Option<ItemRef>, PageError> {
    if id.is_empty() {
        return Ok(None);
    }
    let unknown = || ItemRef { id: id.to_owned(), title: id.to_owned(), state: String::new(), claimant: String::new() };
    match web.work.item_history(caller, account, id).await {
        Ok(found) => {
            let item = found.item;
            Ok(Some(ItemRef { id: item.id, title: item.title, state: item.state, claimant: item.claimant }))
        }
        Err(Error::NotFound(_)) => Ok(Some(unknown())),
        Err(error) => Err(error.into()),
    }
}

/// Where a form goes back to: the item's page when it came from there, else the board.
fn back(id: &str, account: &str, from_item: bool) -> Response {
    if from_item && !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        let account: String = account.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect();
        return Redirect::to(&format!("/work/items/{id}?account={account}")).into_response();
    }
    Redirect::to("/work").into_response()
}

/// The hand-off form.
#[derive(Debug, Deserialize)]
pub(crate) struct HandoffForm {
    csrf: String,
    #[serde(default)]
    account_id: String,
    /// What was done and what is left.
    #[serde(default)]
    note: String,
    /// Whom it is for ("" for anyone).
    #[serde(default)]
    to: String,
}

/// `POST /work/items/{id}/handoff`: `work_handoff` as the signed-in principal; back to the item's page.
pub(crate) async fn handoff(
    State(web): State<Web>,
    visit: Visit,
    Path(id): Path<String>,
    Form(form): Form<HandoffForm>,
) -> Result<Response, PageError> {
    check_csrf(&web, &visit.headers, &form.csrf)?;
    let caller = work_caller(&web, &visit, "work_handoff", &WORK_WRITE).await?;
    web.work.handoff_item(&caller, &form.account_id, &id, &form.note, &form.to).await?;
    Ok(back(&id, &form.account_id, true))
}

/// The state form: `in_progress`, `blocked` or `done`.
#[derive(Debug, Deserialize)]
pub(crate) struct StateForm {
    csrf: String,
    #[serde(default)]
    account_id: String,
    #[serde(default)]
    state: String,
    /// `item` when the form is on the item's page, which it goes back to.
    #[serde(default)]
    from: String,
}

/// `POST /work/items/{id}/state`: `work_update` with a new state as the signed-in principal.
pub(crate) async fn set_state(
    State(web): State<Web>,
    visit: Visit,
    Path(id): Path<String>,
    Form(form): Form<StateForm>,
) -> Result<Response, PageError> {
    check_csrf(&web, &visit.headers, &form.csrf)?;
    let caller = work_caller(&web, &visit, "work_update", &WORK_WRITE).await?;
    let update = cairn_work::ItemUpdate { state: form.state.clone(), ..cairn_work::ItemUpdate::default() };
    web.work.update_item(&caller, &form.account_id, &id, &update).await?;
    Ok(back(&id, &form.account_id, form.from == "item"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(kind: &str, data: Value) -> (String, String) {
        what(kind, &data)
    }

    #[test]
    fn events_read_as_sentences() {
        let lease = json!({"claimant": "bot", "lease_expires_at": "2026-01-01T00:00:00.000Z"});
        let cases = [
            ("state_changed", json!({"from": "claimed", "to": "blocked"}), "moved it from claimed to blocked", ""),
            ("handed_off", json!({"to": "ada", "note": "half done"}), "handed it off to ada", "half done"),
            ("links_added", json!({"links": ["a", "b"]}), "added links: a, b", ""),
            ("created", json!({"blocked_by": ["wi_1", "wi_2"]}), "created it, waiting for wi_1, wi_2", ""),
            ("claimed", lease, "claimed it as bot with a lease until 2026-01-01T00:00:00.000Z", ""),
            ("lease_expired", json!({"claimant": "bot", "message": "lease expired: held by bot since x"}),
                "ended the lease of bot: it is open again", "lease expired: held by bot since x"),
            ("priority_changed", json!({"from": 2, "to": 0}), "changed the priority from P2 to P0", ""),
            ("labels_changed", json!({"added": ["ui"], "removed": []}), "added labels ui", ""),
            ("blockers_changed", json!({"added": ["a"], "removed": ["b"]}), "added blockers a; removed b", ""),
            ("parent_changed", json!({"from": "wi_9", "to": ""}), "took it out of wi_9", ""),
            ("unblocked", json!({"last_blocker": "wi_3"}), "its last blocker (wi_3) is done", ""),
            ("evidence", json!({"repository": "acme/web", "pull_request": 7,
                "evidence": {"kind": "rolled", "service": "prod", "commit": "abc1234def5678abc"}}),
                "recorded acme/web#7 rolled to prod at abc1234def56", ""),
        ];
        for (kind, data, what, note) in cases {
            assert_eq!(check(kind, data), (what.to_owned(), note.to_owned()), "{kind}");
        }
    }
}
