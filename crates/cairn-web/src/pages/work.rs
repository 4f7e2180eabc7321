//! Work pages: the board (items by state with claimant, priority, labels, what they wait for, the lease time left,
//! hand-off, links and the evidence recorded for the pull requests they link to — merged / rolled, commit, service,
//! who recorded it and when (`work/card.rs`); claim on open items, block, resume and finish on held ones, hand-off on
//! the item's page (`work_item.rs`); filters by claimant, space, text, labels and priority, and one column — a state
//! or the ready queue; a column shows 50 cards, and "More" pages through that state alone; its columns refresh every
//! few seconds), the documents of every space, and one document with
//! its `work_status` findings. Item, document and evidence text is untrusted and only ever rendered escaped.
//!
//! The pages act as the principal signed in with a work token, held to its scopes, or else as the local person on a
//! loopback-only server (`signin.rs`, [`work_caller`]).

pub(super) mod card;

use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use cairn_work::{Caller, DocumentSummary, Error, ListQuery, WORK_READ, WORK_WRITE, WorkItem};
use serde::Deserialize;
use serde_json::Value;

use super::signin::work_caller;
use super::{Layout, PageError, check_csrf, html, Visit};
use crate::state::Web;
use crate::workspace::Workspace;

const STATES: [&str; 5] = ["open", "claimed", "in_progress", "blocked", "done"];

struct Column {
    state: &'static str,
    cards: Vec<card::Card>,
    /// The query of the column's next page (that state alone, from where this one ends), or "" when none follows.
    more: String,
}

/// Cards a column shows on one page.
const COLUMN_PAGE: i64 = 50;

#[derive(Template)]
#[template(path = "work/board.html")]
struct BoardPage {
    layout: Layout,
    account: String,
    csrf: String,
    columns: Vec<Column>,
    filter: BoardParam,
    /// `(id, name)` of every space, for the filter.
    spaces: Vec<(String, String)>,
    /// The filter as a query string, for the live refresh.
    query: String,
}

#[derive(Template)]
#[template(path = "work/_board.html")]
struct BoardFragment {
    csrf: String,
    columns: Vec<Column>,
}

#[derive(Template)]
#[template(path = "work/documents.html")]
struct DocumentsPage {
    layout: Layout,
    account: String,
    spaces: Vec<(String, Vec<DocumentSummary>)>,
}

struct Piece {
    piece: String,
    heading: String,
    claims: String,
    shows: String,
    evidence: String,
    finding: String,
}

#[derive(Template)]
#[template(path = "work/document.html")]
struct DocumentPage {
    layout: Layout,
    title: String,
    version: i64,
    /// The body as HTML ([`super::docs::user_markdown`]: its own HTML shown as text).
    body: String,
    pieces: Vec<Piece>,
    status_error: Option<String>,
}

/// The board's query: `?fragment=1` asks for the columns only; the rest filters the cards.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct BoardParam {
    #[serde(default)]
    fragment: Option<String>,
    /// Who holds the item (as `work_list`'s `claimed_by` matches it).
    #[serde(default)]
    claimant: String,
    /// A space id.
    #[serde(default)]
    space: String,
    /// Words the title or notes contain (any case).
    #[serde(default)]
    q: String,
    /// One column: a state, or `ready` (open, unheld, every blocker done; most urgent first); "" for all five.
    #[serde(default)]
    state: String,
    /// Labels, separated by commas or spaces: items carrying every one.
    #[serde(default)]
    labels: String,
    /// `0` to `4`; "" for any.
    #[serde(default)]
    priority: String,
    /// Where the one column asked for goes on (a `next_page_token`); "" from its start.
    #[serde(default)]
    after: String,
}

impl BoardParam {
    /// Whether `item` has the text and priority asked for (the ready queue filters by labels only).
    fn matches(&self, item: &WorkItem, priority: Option<i64>) -> bool {
        let words = self.q.to_lowercase();
        let text = format!("{} {}", item.title, item.notes).to_lowercase();
        words.split_whitespace().all(|word| text.contains(word)) && priority.is_none_or(|p| p == item.priority)
    }

    /// The labels asked for.
    fn labels(&self) -> Vec<String> {
        self.labels.split([',', ' ']).filter(|l| !l.is_empty()).map(str::to_owned).collect()
    }

    /// The priority asked for, if any.
    fn priority(&self) -> Result<Option<i64>, PageError> {
        match self.priority.trim() {
            "" => Ok(None),
            p => match p.parse::<i64>() {
                Ok(p @ 0..=4) => Ok(Some(p)),
                _ => Err(Error::InvalidArgument(format!("priority must be 0 (most urgent) to 4; it is '{p}'")).into()),
            },
        }
    }

    /// The filter as a query string (the values percent-encoded).
    fn query(&self) -> String {
        self.query_of(true)
    }

    /// The filter but its column and page, as a query string.
    fn query_without_column(&self) -> String {
        self.query_of(false)
    }

    fn query_of(&self, column: bool) -> String {
        let fields = [
            ("claimant", &self.claimant),
            ("space", &self.space),
            ("state", &self.state),
            ("labels", &self.labels),
            ("priority", &self.priority),
            ("q", &self.q),
        ];
        let mut query: Vec<String> = fields
            .iter()
            .filter(|(name, _)| column || *name != "state")
            .map(|(name, value)| format!("{name}={}", encode(value)))
            .collect();
        if column && !self.after.is_empty() {
            query.push(format!("after={}", encode(&self.after)));
        }
        query.join("&")
    }
}

/// `value` percent-encoded for a query string.
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The claim form of a card.
#[derive(Debug, Deserialize)]
pub(crate) struct ClaimForm {
    csrf: String,
    /// The item's account.
    #[serde(default)]
    account_id: String,
}

/// The board's columns: all five states, or the one the filter asks for.
async fn columns(web: &Web, caller: &Caller, filter: &BoardParam) -> Result<Vec<Column>, PageError> {
    let priority = filter.priority()?;
    let states: Vec<&'static str> = match filter.state.trim() {
        "" => STATES.to_vec(),
        "ready" => {
            let items = ready(web, caller, filter, priority).await?;
            let cards = card::cards(web, caller, items).await?;
            return Ok(vec![Column { state: "ready", cards, more: String::new() }]);
        }
        state => match STATES.iter().find(|s| **s == state) {
            Some(state) => vec![*state],
            None => {
                let message = format!("state '{state}' is not one of ready, {} (or empty for all)", STATES.join(", "));
                return Err(Error::InvalidArgument(message).into());
            }
        },
    };
    let mut items = Vec::new();
    let mut counts = Vec::new();
    let one = states.len() == 1;
    for state in states {
        let query = ListQuery {
            state: state.into(),
            page_size: COLUMN_PAGE,
            page_token: if one { filter.after.clone() } else { String::new() },
            claimed_by: filter.claimant.clone(),
            space_id: filter.space.clone(),
            labels: filter.labels(),
            priority,
            query: filter.q.clone(),
            ..ListQuery::default()
        };
        let listed = web.work.list_items(caller, &query).await?;
        let more = match listed.next_page_token.as_str() {
            "" => String::new(),
            token => format!("{}&state={state}&after={}", filter.query_without_column(), encode(token)),
        };
        counts.push((state, listed.items.len(), more));
        items.extend(listed.items);
    }
    let mut cards = card::cards(web, caller, items).await?.into_iter();
    let columns = counts.into_iter().map(|(state, count, more)| Column { state, cards: cards.by_ref().take(count).collect(), more });
    Ok(columns.collect())
}

/// The ready queue of the filter's space, or of every space of the account merged (most urgent first, then oldest),
/// with the filter's text and priority; nothing when it asks for a claimant, since nobody holds a ready item.
async fn ready(
    web: &Web,
    caller: &Caller,
    filter: &BoardParam,
    priority: Option<i64>,
) -> Result<Vec<WorkItem>, PageError> {
    if !filter.claimant.trim().is_empty() {
        return Ok(Vec::new());
    }
    let spaces = match filter.space.trim() {
        "" => all_spaces(web, caller).await?.into_iter().map(|(id, _)| id).collect(),
        space => vec![space.to_owned()],
    };
    let mut items = Vec::new();
    for space in spaces {
        items.extend(web.work.ready_items(caller, &space, &filter.labels(), 200).await?);
    }
    items.retain(|item| filter.matches(item, priority));
    items.sort_by(|a, b| (a.priority, &a.created_at).cmp(&(b.priority, &b.created_at)));
    Ok(items)
}

/// `(id, name)` of every space of the caller's account.
async fn all_spaces(web: &Web, caller: &Caller) -> Result<Vec<(String, String)>, PageError> {
    let listed = web.work.list_spaces(caller, "", 200, "").await?;
    let spaces = listed["spaces"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| (s["id"].as_str().unwrap_or_default().to_owned(), s["name"].as_str().unwrap_or_default().to_owned()))
        .collect();
    Ok(spaces)
}

/// `GET /work`.
pub(crate) async fn board(
    State(web): State<Web>,
    visit: Visit,
    Query(q): Query<BoardParam>,
) -> Result<Response, PageError> {
    let caller = work_caller(&web, &visit, "work_list", &WORK_READ).await?;
    let columns = columns(&web, &caller, &q).await?;
    if q.fragment.is_some() {
        let csrf = web.csrf.token(&visit.headers);
        return Ok(html(&BoardFragment { csrf, columns }));
    }
    let spaces = all_spaces(&web, &caller).await?;
    let layout = Layout::new(&web, &visit, &Workspace::global()).await?;
    let query = q.query();
    let page = BoardPage {
        layout: layout.clone(),
        account: caller.label(),
        csrf: layout.csrf.clone(),
        columns,
        filter: q,
        spaces,
        query,
    };
    Ok(html(&page))
}

/// `POST /work/items/{id}/claim`: the caller claims an open item under its display name.
pub(crate) async fn claim(
    State(web): State<Web>,
    visit: Visit,
    Path(id): Path<String>,
    Form(form): Form<ClaimForm>,
) -> Result<Response, PageError> {
    check_csrf(&web, &visit.headers, &form.csrf)?;
    let caller = work_caller(&web, &visit, "work_claim", &WORK_WRITE).await?;
    web.work.claim_item(&caller, &form.account_id, &id, &caller.display_name, None).await?;
    Ok(Redirect::to("/work").into_response())
}

/// `GET /work/documents`.
pub(crate) async fn documents(State(web): State<Web>, visit: Visit) -> Result<Response, PageError> {
    let caller = work_caller(&web, &visit, "decisions_list_documents", &WORK_READ).await?;
    let listed = web.work.list_spaces(&caller, "", 200, "").await?;
    let mut spaces = Vec::new();
    for space in listed["spaces"].as_array().into_iter().flatten() {
        let id = space["id"].as_str().unwrap_or_default();
        let docs = web.work.list_documents(&caller, "", id, "", 200, "").await?;
        let docs: Vec<DocumentSummary> = docs["documents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(summary)
            .collect();
        spaces.push((space["name"].as_str().unwrap_or_default().to_owned(), docs));
    }
    let layout = Layout::new(&web, &visit, &Workspace::global()).await?;
    Ok(html(&DocumentsPage { layout: layout.clone(), account: caller.label(), spaces }))
}

fn summary(d: &Value) -> Option<DocumentSummary> {
    let s = |key: &str| d[key].as_str().map(str::to_owned);
    Some(DocumentSummary {
        id: s("id")?,
        space_id: s("space_id")?,
        title: s("title")?,
        version: d["version"].as_i64()?,
        updated_at: s("updated_at").unwrap_or_default(),
        updated_by: s("updated_by").unwrap_or_default(),
    })
}

/// `GET /work/spaces/{space_id}/documents/{document_id}`.
pub(crate) async fn document(
    State(web): State<Web>,
    visit: Visit,
    Path((space_id, document_id)): Path<(String, String)>,
) -> Result<Response, PageError> {
    let caller = work_caller(&web, &visit, "work_status", &WORK_READ).await?;
    let doc = web.work.get_document(&caller, &space_id, &document_id).await?;
    let (pieces, status_error) = match web.work.status(&caller, &space_id, &document_id, "").await {
        Ok(status) => (status["pieces"].as_array().into_iter().flatten().map(piece).collect(), None),
        Err(error) => (Vec::new(), Some(error.to_string())),
    };
    let layout = Layout::new(&web, &visit, &Workspace::global()).await?;
    let (title, version, body) = (doc.title, doc.version, super::docs::user_markdown(&doc.body));
    let page = DocumentPage { layout: layout.clone(), title, version, body, pieces, status_error };
    Ok(html(&page))
}

fn piece(p: &Value) -> Piece {
    let s = |key: &str| p[key].as_str().unwrap_or_default().to_owned();
    let evidence = p["pull_requests"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|pr| {
            let merged = if pr["merged"].as_bool() == Some(true) { "merged" } else { "not merged" };
            format!("{}#{} {merged}", pr["repository"].as_str().unwrap_or_default(), pr["number"])
        })
        .collect::<Vec<_>>()
        .join(", ");
    Piece {
        piece: s("piece"),
        heading: s("heading"),
        claims: s("claims"),
        shows: s("shows"),
        evidence,
        finding: s("finding"),
    }
}
