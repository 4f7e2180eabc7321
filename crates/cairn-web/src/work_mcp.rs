//! `/mcp`: the work and decisions tools over Streamable HTTP, behind bearer tokens (spec workitems §3, §8).
//!
//! Every request to `/mcp` must carry `Authorization: Bearer <token>`. A missing, unknown, expired or revoked token
//! is `401` with `WWW-Authenticate: Bearer resource_metadata="…"` (plus `error="invalid_token"` when a token was
//! sent), which is where MCP clients start OAuth discovery; the metadata is served at
//! `/.well-known/oauth-protected-resource/mcp` (and the root variant) without a token. An authenticated request
//! carries its [`Caller`] in the request's extensions, where the work tools read it. Bodies are limited to 1 MiB.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use cairn_store::Store;
use cairn_work::{Caller, Scope, Service, WorkServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The largest request body `/mcp` accepts (documents are at most 512 KiB).
const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Where the protected-resource metadata of `/mcp` lives.
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// `/mcp` and its protected-resource metadata, over the database in `store`.
pub(crate) fn routes(store: Store, extra_allowed_hosts: &[String], shutdown: &CancellationToken) -> Router {
    let sessions = Some(cairn_mcp::DatabaseSessions::new(store.clone(), "/mcp"));
    let service = Service::new(store);
    let factory = service.clone();
    let mut mcp =
        cairn_mcp::http_service(move || WorkServer::http(factory.clone()), extra_allowed_hosts, shutdown, sessions);
    mcp.config.max_request_body_bytes = MAX_BODY_BYTES;
    let guarded =
        Router::new().nest_service("/mcp", mcp).route_layer(middleware::from_fn_with_state(service, authenticate));
    Router::new()
        .route(METADATA_PATH, get(metadata))
        .route("/.well-known/oauth-protected-resource", get(metadata))
        .merge(guarded)
}

/// Lets through requests with a valid bearer token (their [`Caller`] attached); answers the rest with 401 or 413.
async fn authenticate(State(service): State<Service>, mut request: Request, next: Next) -> Response {
    let too_big = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|n| n > MAX_BODY_BYTES);
    if too_big {
        return (StatusCode::PAYLOAD_TOO_LARGE, "the request body is larger than 1 MiB").into_response();
    }
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::to_owned);
    let Some(bearer) = bearer else {
        return unauthorized(request.headers(), None);
    };
    match service.authenticate(&bearer).await {
        Ok(Some(caller)) => {
            request.extensions_mut().insert::<Caller>(caller);
            next.run(request).await
        }
        Ok(None) => unauthorized(request.headers(), Some("the token is unknown, expired or revoked")),
        Err(error) => (StatusCode::SERVICE_UNAVAILABLE, error.to_string()).into_response(),
    }
}

/// `401` with the challenge that points MCP clients at the metadata; `invalid` says why a given token was refused.
fn unauthorized(headers: &HeaderMap, invalid: Option<&str>) -> Response {
    let mut challenge = format!("Bearer resource_metadata=\"{}{METADATA_PATH}\"", base_url(headers));
    if invalid.is_some() {
        challenge.push_str(", error=\"invalid_token\"");
    }
    let message = invalid.unwrap_or("this endpoint needs Authorization: Bearer <token> (cairn work token create)");
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": message}});
    let mut response = (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// `http://<Host>` of the request (the Host guard has already checked it).
fn base_url(headers: &HeaderMap) -> String {
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("localhost");
    format!("http://{host}")
}

/// The OAuth protected-resource metadata of `/mcp`.
async fn metadata(headers: HeaderMap) -> Json<Value> {
    Json(json!({
        "resource": format!("{}/mcp", base_url(&headers)),
        "scopes_supported": Scope::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "bearer_methods_supported": ["header"],
        "resource_name": "cairn work items and decisions",
    }))
}
