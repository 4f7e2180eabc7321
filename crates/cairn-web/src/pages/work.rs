//! Work pages: the board (items by state with claimant, hand-off and evidence links; its columns refresh every few
//! seconds), the documents of every space, and one document with its `work_status` findings. Item and document
//! text is untrusted and only ever rendered escaped.
//!
//! The pages act as the local person (account `acc_local`, as `cairn work mcp` does over stdio) and only on a server
//! that answers loopback names alone; a server reachable under other names serves work through the REST API, with
//! bearer tokens.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use cairn_work::{Caller, DocumentSummary, Kind, ListQuery, WorkItem};
use serde::Deserialize;
use serde_json::Value;

use super::{Layout, PageError, html, render};
use crate::error::ApiError;
use crate::state::Web;
use crate::workspace::Workspace;

const STATES: [&str; 5] = ["open", "claimed", "in_progress", "blocked", "done"];

struct Column {
    state: &'static str,
    items: Vec<WorkItem>,
}

#[derive(Template)]
#[template(path = "work/board.html")]
struct BoardPage {
    layout: Layout,
    account: String,
    columns: Vec<Column>,
}

#[derive(Template)]
#[template(path = "work/_board.html")]
struct BoardFragment {
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

/// `?fragment=1` asks for the board's columns only.
#[derive(Debug, Deserialize)]
pub(crate) struct BoardParam {
    #[serde(default)]
    fragment: Option<String>,
}

/// The local person, on a loopback-only server.
async fn local(web: &Web) -> Result<Caller, PageError> {
    if !web.loopback_only {
        return Err(ApiError::roscoe(
            StatusCode::FORBIDDEN,
            "permission_denied",
            "this server answers other host names too, so its work pages are off; use /api/work/items with a bearer \
             token (cairn work token create)",
        )
        .into());
    }
    Ok(web.work.local_caller(Kind::Person).await?)
}

async fn columns(web: &Web, caller: &Caller) -> Result<Vec<Column>, PageError> {
    let mut columns = Vec::new();
    for state in STATES {
        let query = ListQuery { state: state.into(), page_size: 200, ..ListQuery::default() };
        columns.push(Column { state, items: web.work.list_items(caller, &query).await?.items });
    }
    Ok(columns)
}

/// `GET /work`.
pub(crate) async fn board(
    State(web): State<Web>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<BoardParam>,
) -> Result<Response, PageError> {
    let caller = local(&web).await?;
    let columns = columns(&web, &caller).await?;
    if q.fragment.is_some() {
        return Ok(html(&BoardFragment { columns }));
    }
    let layout = Layout::new(&web, &headers, &uri, &Workspace::global()).await?;
    Ok(render(&layout, &BoardPage { layout: layout.clone(), account: caller.label(), columns }))
}

/// `GET /work/documents`.
pub(crate) async fn documents(State(web): State<Web>, headers: HeaderMap, uri: Uri) -> Result<Response, PageError> {
    let caller = local(&web).await?;
    let listed = web.work.list_spaces(&caller, "", 200, "").await?;
    let mut spaces = Vec::new();
    for space in listed["spaces"].as_array().into_iter().flatten() {
        let id = space["id"].as_str().unwrap_or_default();
        let docs = web.work.list_documents(&caller, "", id, "", 200, "").await?;
        let docs: Vec<DocumentSummary> = docs["documents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| summary(d))
            .collect();
        spaces.push((space["name"].as_str().unwrap_or_default().to_owned(), docs));
    }
    let layout = Layout::new(&web, &headers, &uri, &Workspace::global()).await?;
    Ok(render(&layout, &DocumentsPage { layout: layout.clone(), account: caller.label(), spaces }))
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
    headers: HeaderMap,
    uri: Uri,
    Path((space_id, document_id)): Path<(String, String)>,
) -> Result<Response, PageError> {
    let caller = local(&web).await?;
    let doc = web.work.get_document(&caller, &space_id, &document_id).await?;
    let (pieces, status_error) = match web.work.status(&caller, &space_id, &document_id, "").await {
        Ok(status) => (status["pieces"].as_array().into_iter().flatten().map(piece).collect(), None),
        Err(error) => (Vec::new(), Some(error.to_string())),
    };
    let layout = Layout::new(&web, &headers, &uri, &Workspace::global()).await?;
    let page =
        DocumentPage { layout: layout.clone(), title: doc.title, version: doc.version, body: doc.body, pieces, status_error };
    Ok(render(&layout, &page))
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
