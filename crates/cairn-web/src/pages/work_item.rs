//! One work item's page (`/work/items/{id}`: the item, its whole history from `work_events` with humanised times,
//! and what a person can do with it) and the forms that change an item from the board or that page — hand off
//! (`work_handoff`), and a new state: in progress, blocked or done (`work_update`) — through the same facade calls
//! as the work tools, as the signed-in principal.

use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use cairn_work::{WORK_READ, WORK_WRITE, WorkItem};
use serde::Deserialize;
use serde_json::Value;

use super::signin::work_caller;
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
}

#[derive(Template)]
#[template(path = "work/item.html")]
struct ItemPage {
    layout: Layout,
    item: WorkItem,
    created: Moment,
    history: Vec<Entry>,
}

/// `?account=`: the item's account ("" is the caller's own).
#[derive(Debug, Deserialize)]
pub(crate) struct AccountParam {
    #[serde(default)]
    account: String,
}

/// What an event changed, in words.
fn what(kind: &str, data: &Value) -> String {
    let s = |key: &str| data[key].as_str().unwrap_or_default();
    match kind {
        "created" => "created it".to_owned(),
        "claimed" => format!("claimed it as {}", s("claimant")),
        "state_changed" => format!("moved it from {} to {}", s("from"), s("to")),
        "notes_changed" => format!("set the notes: {}", s("notes")),
        "links_added" => {
            let links: Vec<&str> = data["links"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            format!("added links: {}", links.join(", "))
        }
        "handed_off" => match s("to") {
            "" => format!("handed it off: {}", s("note")),
            to => format!("handed it off to {to}: {}", s("note")),
        },
        other => format!("{other} {data}"),
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
        .map(|e| Entry { at: Moment::of(&e.at), by: e.by.clone(), kind: e.kind.clone(), what: what(&e.kind, &e.data) })
        .collect();
    let layout = Layout::new(&web, &visit, &Workspace::global()).await?;
    let page = ItemPage { layout: layout.clone(), created: Moment::of(&found.item.created_at), item: found.item, history };
    Ok(html(&page))
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

    #[test]
    fn events_read_as_sentences() {
        assert_eq!(what("state_changed", &json!({"from": "claimed", "to": "blocked"})), "moved it from claimed to blocked");
        assert_eq!(what("handed_off", &json!({"to": "ada", "note": "half done"})), "handed it off to ada: half done");
        assert_eq!(what("links_added", &json!({"links": ["a", "b"]})), "added links: a, b");
    }
}
