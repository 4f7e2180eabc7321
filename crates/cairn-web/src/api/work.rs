//! `/api/work/items…` and `/api/spaces…`: work items, spaces and documents over HTTP, behind the same bearer tokens
//! and scopes as `/mcp` — reads need `mcp:read` + `decisions:read`, changes `mcp:write` + `decisions:write` (the
//! scope errors name the matching tool). Bodies and errors are the work tools' (`{ error: { code, message,
//! details } }`). A missing or refused token is answered by the access gate: `401` with a `WWW-Authenticate: Bearer`
//! challenge.

use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::Json;
use cairn_work::{Caller, ListQuery, WORK_READ, WORK_WRITE};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::{IntoParams, ToSchema};

use crate::error::ApiError;
use crate::state::Web;

/// The caller of a request with a valid `Authorization: Bearer` token (the access gate let only such requests
/// through, and attached their caller).
#[derive(Debug, Clone)]
pub(crate) struct Bearer(pub(crate) Caller);

impl<S: Send + Sync> FromRequestParts<S> for Bearer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Bearer, ApiError> {
        parts.extensions.get::<Caller>().cloned().map(Bearer).ok_or_else(|| {
            ApiError::roscoe(StatusCode::UNAUTHORIZED, "unauthenticated", "this endpoint needs Authorization: Bearer <token>")
        })
    }
}

/// Checks the token's scopes for a read (`write = false`) or a change, named after the MCP tool.
fn allow(caller: &Caller, tool: &str, write: bool) -> Result<(), ApiError> {
    Ok(caller.require(tool, if write { &WORK_WRITE } else { &WORK_READ })?)
}

fn json<T: Serialize>(value: T) -> Json<Value> {
    Json(serde_json::to_value(value).unwrap_or(Value::Null))
}

/// `GET /api/work/items` filters (those of `work_list`).
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(default)]
pub(crate) struct ItemsQuery {
    /// The account; empty is the token's own.
    account_id: String,
    /// One space; empty for the whole account.
    space_id: String,
    /// One document.
    document_id: String,
    /// open, claimed, in_progress, blocked or done; empty for all but done.
    state: String,
    /// What one agent or person holds.
    claimed_by: String,
    /// 0 means 50, at most 200.
    page_size: i64,
    /// The `next_page_token` of the page before.
    page_token: String,
}

/// A new work item.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateItem {
    /// The space.
    space_id: String,
    /// One line.
    title: String,
    /// Notes.
    #[serde(default)]
    notes: String,
    /// Up to ten URLs.
    #[serde(default)]
    links: Vec<String>,
    /// The document it implements.
    #[serde(default)]
    document_id: String,
}

/// A claim.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClaimItem {
    /// Who holds it, as they name themselves.
    claimant: String,
    /// The account; empty is the token's own.
    #[serde(default)]
    account_id: String,
}

/// A change of state, notes or links.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateItem {
    /// The new state.
    #[serde(default)]
    state: String,
    /// New notes.
    #[serde(default)]
    notes: String,
    /// Links to add.
    #[serde(default)]
    links: Vec<String>,
    /// The account; empty is the token's own.
    #[serde(default)]
    account_id: String,
}

/// A hand-off.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HandoffItem {
    /// What was done and what is left.
    note: String,
    /// Whom it is for; empty for anyone.
    #[serde(default)]
    to: String,
    /// The account; empty is the token's own.
    #[serde(default)]
    account_id: String,
}

/// Paging of spaces.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(default)]
pub(crate) struct SpacesQuery {
    /// The account; empty is the token's own.
    account_id: String,
    /// 0 means 50.
    page_size: i64,
    /// The next page.
    page_token: String,
}

/// Filters of a space's documents.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(default)]
pub(crate) struct DocumentsQuery {
    /// The account; empty is the token's own.
    account_id: String,
    /// Words in the title.
    query: String,
    /// 0 means 50.
    page_size: i64,
    /// The next page.
    page_token: String,
}

/// `?repository=` of `work_status`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(default)]
pub(crate) struct StatusQuery {
    /// `owner/name`; empty for the account's default.
    repository: String,
}

/// A new space.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateSpace {
    /// Its name.
    name: String,
    /// What it is for.
    #[serde(default)]
    description: String,
    /// The account; empty is the token's own.
    #[serde(default)]
    account_id: String,
}

/// A new document.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateDocument {
    /// Its title.
    title: String,
    /// Markdown, at most 512 KiB.
    body: String,
}

/// A new version of a document.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateDocument {
    /// The version the change is based on.
    base_version: i64,
    /// A new title; empty keeps it.
    #[serde(default)]
    title: String,
    /// A new body; empty keeps it.
    #[serde(default)]
    body: String,
}

/// One page of work items (`work_list`).
#[utoipa::path(get, path = "/api/work/items", tag = "work", params(ItemsQuery), security(("bearer" = [])),
    responses((status = 200, description = "`{ items, next_page_token }`", body = Object), (status = 401, body = Object)))]
pub(crate) async fn list_items(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Query(q): Query<ItemsQuery>,
) -> Result<Json<Value>, ApiError> {
    allow(&caller, "work_list", false)?;
    let query = ListQuery {
        account_id: q.account_id,
        space_id: q.space_id,
        document_id: q.document_id,
        state: q.state,
        claimed_by: q.claimed_by,
        page_size: q.page_size,
        page_token: q.page_token,
    };
    Ok(json(web.work.list_items(&caller, &query).await?))
}

/// A new open item (`work_create`).
#[utoipa::path(post, path = "/api/work/items", tag = "work", request_body = CreateItem, security(("bearer" = [])),
    responses((status = 201, body = Object), (status = 400, body = Object), (status = 401, body = Object)))]
pub(crate) async fn create_item(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Json(b): Json<CreateItem>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    allow(&caller, "work_create", true)?;
    let item = web.work.create_item(&caller, &b.space_id, &b.title, &b.notes, &b.links, &b.document_id).await?;
    Ok((StatusCode::CREATED, json(item)))
}

/// Claims an item (`work_claim`); of concurrent claims exactly one wins.
#[utoipa::path(post, path = "/api/work/items/{id}/claim", tag = "work", params(("id" = String, Path)),
    request_body = ClaimItem, security(("bearer" = [])),
    responses((status = 200, body = Object), (status = 409, body = Object), (status = 401, body = Object)))]
pub(crate) async fn claim_item(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Path(id): Path<String>,
    Json(b): Json<ClaimItem>,
) -> Result<Json<Value>, ApiError> {
    allow(&caller, "work_claim", true)?;
    Ok(json(web.work.claim_item(&caller, &b.account_id, &id, &b.claimant).await?))
}

/// Changes an item's state, notes or links (`work_update`).
#[utoipa::path(patch, path = "/api/work/items/{id}", tag = "work", params(("id" = String, Path)),
    request_body = UpdateItem, security(("bearer" = [])),
    responses((status = 200, description = "`{ item, changed }`", body = Object), (status = 401, body = Object)))]
pub(crate) async fn update_item(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Path(id): Path<String>,
    Json(b): Json<UpdateItem>,
) -> Result<Json<Value>, ApiError> {
    allow(&caller, "work_update", true)?;
    let (item, changed) = web.work.update_item(&caller, &b.account_id, &id, &b.state, &b.notes, &b.links).await?;
    Ok(Json(json!({ "item": item, "changed": changed })))
}

/// Opens an item again with a note for the next holder (`work_handoff`).
#[utoipa::path(post, path = "/api/work/items/{id}/handoff", tag = "work", params(("id" = String, Path)),
    request_body = HandoffItem, security(("bearer" = [])),
    responses((status = 200, body = Object), (status = 401, body = Object)))]
pub(crate) async fn handoff_item(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Path(id): Path<String>,
    Json(b): Json<HandoffItem>,
) -> Result<Json<Value>, ApiError> {
    allow(&caller, "work_handoff", true)?;
    Ok(json(web.work.handoff_item(&caller, &b.account_id, &id, &b.note, &b.to).await?))
}

/// The account's spaces (`decisions_list_spaces`).
#[utoipa::path(get, path = "/api/spaces", tag = "work", params(SpacesQuery), security(("bearer" = [])),
    responses((status = 200, description = "`{ spaces, next_page_token }`", body = Object), (status = 401, body = Object)))]
pub(crate) async fn list_spaces(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Query(q): Query<SpacesQuery>,
) -> Result<Json<Value>, ApiError> {
    allow(&caller, "decisions_list_spaces", false)?;
    Ok(Json(web.work.list_spaces(&caller, &q.account_id, q.page_size, &q.page_token).await?))
}

/// A new space, or the existing one of that name (`decisions_create_space`).
#[utoipa::path(post, path = "/api/spaces", tag = "work", request_body = CreateSpace, security(("bearer" = [])),
    responses((status = 200, description = "`{ space, created }`", body = Object), (status = 401, body = Object)))]
pub(crate) async fn create_space(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Json(b): Json<CreateSpace>,
) -> Result<Json<Value>, ApiError> {
    allow(&caller, "decisions_create_space", true)?;
    Ok(Json(web.work.create_space(&caller, &b.account_id, &b.name, &b.description).await?))
}

/// A space's documents, bodies left out (`decisions_list_documents`).
#[utoipa::path(get, path = "/api/spaces/{space_id}/documents", tag = "work",
    params(("space_id" = String, Path), DocumentsQuery), security(("bearer" = [])),
    responses((status = 200, description = "`{ documents, next_page_token }`", body = Object), (status = 401, body = Object)))]
pub(crate) async fn list_documents(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Path(space_id): Path<String>,
    Query(q): Query<DocumentsQuery>,
) -> Result<Json<Value>, ApiError> {
    allow(&caller, "decisions_list_documents", false)?;
    let found =
        web.work.list_documents(&caller, &q.account_id, &space_id, &q.query, q.page_size, &q.page_token).await?;
    Ok(Json(found))
}

/// A new document, version 1 (`decisions_create_document`).
#[utoipa::path(post, path = "/api/spaces/{space_id}/documents", tag = "work", params(("space_id" = String, Path)),
    request_body = CreateDocument, security(("bearer" = [])),
    responses((status = 201, body = Object), (status = 401, body = Object)))]
pub(crate) async fn create_document(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Path(space_id): Path<String>,
    Json(b): Json<CreateDocument>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    allow(&caller, "decisions_create_document", true)?;
    Ok((StatusCode::CREATED, json(web.work.create_document(&caller, &space_id, &b.title, &b.body).await?)))
}

/// One document with its body (`decisions_get_document`).
#[utoipa::path(get, path = "/api/spaces/{space_id}/documents/{document_id}", tag = "work",
    params(("space_id" = String, Path), ("document_id" = String, Path)), security(("bearer" = [])),
    responses((status = 200, body = Object), (status = 404, body = Object), (status = 401, body = Object)))]
pub(crate) async fn get_document(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Path((space_id, document_id)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    allow(&caller, "decisions_get_document", false)?;
    Ok(json(web.work.get_document(&caller, &space_id, &document_id).await?))
}

/// A new version, refused unless based on the current one (`decisions_update_document`).
#[utoipa::path(put, path = "/api/spaces/{space_id}/documents/{document_id}", tag = "work",
    params(("space_id" = String, Path), ("document_id" = String, Path)), request_body = UpdateDocument,
    security(("bearer" = [])), responses((status = 200, body = Object), (status = 409, body = Object),
        (status = 401, body = Object)))]
pub(crate) async fn update_document(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Path((space_id, document_id)): Path<(String, String)>,
    Json(b): Json<UpdateDocument>,
) -> Result<Json<Value>, ApiError> {
    allow(&caller, "decisions_update_document", true)?;
    let doc = web.work.update_document(&caller, &space_id, &document_id, b.base_version, &b.title, &b.body).await?;
    Ok(json(doc))
}

/// What is really built of a document: its pieces, their claims and evidence, and the findings (`work_status`).
#[utoipa::path(get, path = "/api/spaces/{space_id}/documents/{document_id}/status", tag = "work",
    params(("space_id" = String, Path), ("document_id" = String, Path), StatusQuery), security(("bearer" = [])),
    responses((status = 200, body = Object), (status = 401, body = Object)))]
pub(crate) async fn document_status(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Path((space_id, document_id)): Path<(String, String)>,
    Query(q): Query<StatusQuery>,
) -> Result<Json<Value>, ApiError> {
    allow(&caller, "work_status", false)?;
    Ok(Json(web.work.status(&caller, &space_id, &document_id, &q.repository).await?))
}
