//! Work pages: the board (items by state with claimant, hand-off, links and the evidence recorded for the pull
//! requests they link to — merged / rolled, commit, service, who recorded it and when; claim on open items, block,
//! resume and finish on held ones, hand-off on the item's page (`work_item.rs`); filters by claimant, space and
//! text; its columns refresh every few seconds), the documents of every space, and one document with its
//! `work_status` findings. Item, document and evidence text is untrusted and only ever rendered escaped.
//!
//! The pages act as the principal signed in with a work token, held to its scopes, or else as the local person on a
//! loopback-only server (`signin.rs`, [`work_caller`]).

use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use cairn_work::{Caller, DocumentSummary, LinkedPullRequest, ListQuery, WORK_READ, WORK_WRITE, WorkItem};
use serde::Deserialize;
use serde_json::Value;

use super::signin::work_caller;
use super::{Layout, PageError, check_csrf, html, Visit};
use crate::state::Web;
use crate::when::Moment;
use crate::workspace::Workspace;

const STATES: [&str; 5] = ["open", "claimed", "in_progress", "blocked", "done"];

struct Column {
    state: &'static str,
    cards: Vec<Card>,
}

/// An item and the evidence about the pull requests it links to.
struct Card {
    item: WorkItem,
    /// Since when its claimant holds it.
    held: Moment,
    pulls: Vec<Pull>,
}

/// One linked pull request: `owner/name#N` and what is recorded about it.
struct Pull {
    name: String,
    records: Vec<Record>,
}

/// One merged or rolled record, as a card shows it.
struct Record {
    kind: String,
    service: String,
    commit: String,
    short_commit: String,
    at: Moment,
    recorded_by: String,
    recorded_at: Moment,
}

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
}

impl BoardParam {
    /// Whether `item` has the text asked for.
    fn matches(&self, item: &WorkItem) -> bool {
        let words = self.q.to_lowercase();
        let text = format!("{} {}", item.title, item.notes).to_lowercase();
        words.split_whitespace().all(|word| text.contains(word))
    }

    /// The filter as a query string (the values percent-encoded).
    fn query(&self) -> String {
        let encode = |value: &str| -> String {
            value
                .bytes()
                .map(|b| match b {
                    b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
                    _ => format!("%{b:02X}"),
                })
                .collect()
        };
        format!("claimant={}&space={}&q={}", encode(&self.claimant), encode(&self.space), encode(&self.q))
    }
}

/// The claim form of a card.
#[derive(Debug, Deserialize)]
pub(crate) struct ClaimForm {
    csrf: String,
    /// The item's account.
    #[serde(default)]
    account_id: String,
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

/// The board's columns, with the evidence about every card's pull requests read in one go.
async fn columns(web: &Web, caller: &Caller, filter: &BoardParam) -> Result<Vec<Column>, PageError> {
    let mut items = Vec::new();
    let mut counts = Vec::new();
    for state in STATES {
        let query = ListQuery {
            state: state.into(),
            page_size: 200,
            claimed_by: filter.claimant.clone(),
            space_id: filter.space.clone(),
            ..ListQuery::default()
        };
        let listed: Vec<WorkItem> =
            web.work.list_items(caller, &query).await?.items.into_iter().filter(|item| filter.matches(item)).collect();
        counts.push((state, listed.len()));
        items.extend(listed);
    }
    let evidence = web.work.items_evidence(caller, &items).await?;
    let mut cards = items
        .into_iter()
        .zip(evidence)
        .map(|(item, pulls)| Card { held: Moment::of(&item.claimed_at), item, pulls: pulls.into_iter().map(pull).collect() });
    Ok(counts.into_iter().map(|(state, count)| Column { state, cards: cards.by_ref().take(count).collect() }).collect())
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
    let listed = web.work.list_spaces(&caller, "", 200, "").await?;
    let spaces = listed["spaces"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| (s["id"].as_str().unwrap_or_default().to_owned(), s["name"].as_str().unwrap_or_default().to_owned()))
        .collect();
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
    let page =
        DocumentPage { layout: layout.clone(), title: doc.title, version: doc.version, body: doc.body, pieces, status_error };
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
