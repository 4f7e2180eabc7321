//! `/api/work/items…` and `/api/spaces…`: work items, spaces and documents over HTTP, behind the same bearer tokens
//! and scopes as `/mcp` — reads need `mcp:read` + `decisions:read`, changes `mcp:write` + `decisions:write` (the
//! scope errors name the matching tool). Bodies and errors are the work tools' (`{ error: { code, message,
//! details } }`). A missing or refused token is answered by the access gate: `401` with a `WWW-Authenticate: Bearer`
//! challenge.

use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::Json;
use cairn_work::{Caller, EvidenceInput, ItemUpdate, ListQuery, NewItemInput, WORK_READ, WORK_WRITE};
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
    /// Labels, comma-separated: items carrying all of them.
    labels: String,
    /// 0 to 4.
    priority: Option<i64>,
    /// Words in the title or notes.
    query: String,
    /// 0 means 50, at most 200.
    page_size: i64,
    /// The `next_page_token` of the page before.
    page_token: String,
}

/// `GET /api/spaces/{space_id}/ready` filters (those of `work_ready`).
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(default)]
pub(crate) struct ReadyQuery {
    /// Labels, comma-separated: items carrying all of them.
    labels: String,
    /// 0 means 50, at most 200.
    page_size: i64,
}

/// `item_id` and `account_id` of `GET /api/work/items/{id}`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(default)]
pub(crate) struct AccountQuery {
    /// The account; empty is the token's own.
    account_id: String,
}

/// A claim of the next ready item.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClaimNext {
    /// Who holds it, as they name themselves.
    claimant: String,
    /// Only items carrying all of these labels.
    #[serde(default)]
    labels: Vec<String>,
    /// A lease the holder renews (heartbeat); none when absent, unless the server sets a default.
    #[serde(default)]
    lease_seconds: Option<i64>,
}

/// A lease renewal.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Heartbeat {
    /// The name it was claimed under.
    claimant: String,
    /// The account; empty is the token's own.
    #[serde(default)]
    account_id: String,
}

/// A merged or rolled record (`work_record_evidence`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecordEvidence {
    /// `merged` or `rolled`.
    kind: String,
    /// `owner/name`; empty for the account's default.
    #[serde(default)]
    repository: String,
    /// 7 to 64 hex digits.
    commit: String,
    /// The pull requests it carries.
    #[serde(default)]
    pull_requests: Vec<i64>,
    /// The service rolled (rolled only).
    #[serde(default)]
    service: String,
    /// RFC 3339; empty for now.
    #[serde(default)]
    at: String,
    /// The account; empty is the token's own.
    #[serde(default)]
    account_id: String,
}

/// A comma-separated list, empty parts dropped.
fn comma_list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
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
    /// 0 (most urgent) to 4; 2 when absent.
    #[serde(default)]
    priority: Option<i64>,
    /// Up to twenty.
    #[serde(default)]
    labels: Vec<String>,
    /// The parent item.
    #[serde(default)]
    parent_id: String,
    /// Items of the space it waits for.
    #[serde(default)]
    blocked_by: Vec<String>,
}

/// A claim.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClaimItem {
    /// Who holds it, as they name themselves.
    claimant: String,
    /// A lease the holder renews (heartbeat); none when absent, unless the server sets a default.
    #[serde(default)]
    lease_seconds: Option<i64>,
    /// The account; empty is the token's own.
    #[serde(default)]
    account_id: String,
}

/// A change of state, notes, links, priority, labels, blockers or parent.
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
    /// 0 to 4.
    #[serde(default)]
    priority: Option<i64>,
    /// Labels to add.
    #[serde(default)]
    add_labels: Vec<String>,
    /// Labels to take away.
    #[serde(default)]
    remove_labels: Vec<String>,
    /// Items it now waits for too.
    #[serde(default)]
    add_blocked_by: Vec<String>,
    /// Items it no longer waits for.
    #[serde(default)]
    remove_blocked_by: Vec<String>,
    /// The new parent; empty takes it away.
    #[serde(default)]
    parent_id: Option<String>,
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
        labels: comma_list(&q.labels),
        priority: q.priority,
        query: q.query,
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
    let input = NewItemInput {
        space_id: b.space_id,
        title: b.title,
        notes: b.notes,
        links: b.links,
        document_id: b.document_id,
        priority: b.priority,
        labels: b.labels,
        parent_id: b.parent_id,
        blocked_by: b.blocked_by,
    };
    let item = web.work.create_item(&caller, &input).await?;
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
    Ok(json(web.work.claim_item(&caller, &b.account_id, &id, &b.claimant, b.lease_seconds).await?))
}

/// An item whole, with what it waits for, what waits for it, its children and its history (`work_get`).
#[utoipa::path(get, path = "/api/work/items/{id}", tag = "work", params(("id" = String, Path), AccountQuery),
    security(("bearer" = [])),
    responses((status = 200, description = "`{ item, blockers, blocks, children, events }`", body = Object),
        (status = 404, body = Object), (status = 401, body = Object)))]
pub(crate) async fn get_item(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Path(id): Path<String>,
    Query(q): Query<AccountQuery>,
) -> Result<Json<Value>, ApiError> {
    allow(&caller, "work_get", false)?;
    Ok(json(web.work.item_history(&caller, &q.account_id, &id).await?))
}

/// Renews the holder's lease on an item (`work_heartbeat`).
#[utoipa::path(post, path = "/api/work/items/{id}/heartbeat", tag = "work", params(("id" = String, Path)),
    request_body = Heartbeat, security(("bearer" = [])),
    responses((status = 200, body = Object), (status = 409, body = Object), (status = 401, body = Object)))]
pub(crate) async fn heartbeat(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Path(id): Path<String>,
    Json(b): Json<Heartbeat>,
) -> Result<Json<Value>, ApiError> {
    allow(&caller, "work_heartbeat", true)?;
    Ok(json(web.work.heartbeat(&caller, &b.account_id, &id, &b.claimant).await?))
}

/// The ready queue of a space (`work_ready`): open, unheld items whose blockers are all done.
#[utoipa::path(get, path = "/api/spaces/{space_id}/ready", tag = "work", params(("space_id" = String, Path), ReadyQuery),
    security(("bearer" = [])),
    responses((status = 200, description = "`{ items }`", body = Object), (status = 401, body = Object)))]
pub(crate) async fn ready(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Path(space_id): Path<String>,
    Query(q): Query<ReadyQuery>,
) -> Result<Json<Value>, ApiError> {
    allow(&caller, "work_ready", false)?;
    let items = web.work.ready_items(&caller, &space_id, &comma_list(&q.labels), q.page_size).await?;
    Ok(Json(json!({ "items": items })))
}

/// Claims the first ready item of a space (`work_claim_next`): `{ item }`, or `{ item: null, reason }`.
#[utoipa::path(post, path = "/api/spaces/{space_id}/next", tag = "work", params(("space_id" = String, Path)),
    request_body = ClaimNext, security(("bearer" = [])),
    responses((status = 200, description = "`{ item }` or `{ item: null, reason }`", body = Object),
        (status = 401, body = Object)))]
pub(crate) async fn claim_next(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Path(space_id): Path<String>,
    Json(b): Json<ClaimNext>,
) -> Result<Json<Value>, ApiError> {
    allow(&caller, "work_claim_next", true)?;
    Ok(json(web.work.claim_next(&caller, &space_id, &b.claimant, &b.labels, b.lease_seconds).await?))
}

/// Records that pull requests merged or a commit rolled out (`work_record_evidence`); a repeat changes nothing.
#[utoipa::path(post, path = "/api/work/evidence", tag = "work", request_body = RecordEvidence,
    security(("bearer" = [])),
    responses((status = 200, description = "`{ evidence, created }`", body = Object), (status = 400, body = Object),
        (status = 401, body = Object)))]
pub(crate) async fn record_evidence(
    State(web): State<Web>,
    Bearer(caller): Bearer,
    Json(b): Json<RecordEvidence>,
) -> Result<Json<Value>, ApiError> {
    allow(&caller, "work_record_evidence", true)?;
    let input = EvidenceInput {
        account_id: b.account_id,
        kind: b.kind,
        repository: b.repository,
        commit: b.commit,
        pull_requests: b.pull_requests,
        service: b.service,
        at: b.at,
    };
    Ok(json(web.work.record_evidence(&caller, &input).await?))
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
    let update = ItemUpdate {
        state: b.state,
        notes: b.notes,
        links: b.links,
        priority: b.priority,
        add_labels: b.add_labels,
        remove_labels: b.remove_labels,
        add_blocked_by: b.add_blocked_by,
        remove_blocked_by: b.remove_blocked_by,
        parent_id: b.parent_id,
    };
    let (item, changed) = web.work.update_item(&caller, &b.account_id, &id, &update).await?;
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
