//! `/mcp`: the work and decisions tools over Streamable HTTP (spec workitems §3, §8).
//!
//! The access gate (`access.rs`) lets only requests with a valid bearer token through, each carrying its caller
//! (`cairn_work::Caller`, which the work tools read) and its `Access` (which `tools/list` and every call are checked against). Bodies are
//! limited to 1 MiB: a larger `Content-Length` is refused before the body is read.

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use cairn_mcp::{Server, SharedSessions};
use cairn_work::{Service, WorkServer};
use tokio_util::sync::CancellationToken;

/// The largest request body `/mcp` accepts (documents are at most 512 KiB).
const MAX_BODY_BYTES: usize = 1024 * 1024;

/// `/mcp`, over the work facade `service`, with its older clients' sessions kept in `sessions`.
pub(crate) fn routes(
    service: Service,
    sessions: Option<SharedSessions>,
    extra_allowed_hosts: &[String],
    shutdown: &CancellationToken,
) -> Router {
    let factory = Arc::new(move || Server::new(WorkServer::http(service.clone())));
    let mcp = cairn_mcp::http_service(factory, extra_allowed_hosts, shutdown, sessions)
        .with_max_request_body(MAX_BODY_BYTES)
        .into_router();
    Router::new().nest_service("/mcp", mcp).route_layer(middleware::from_fn(refuse_large))
}

/// Answers `413` to a request that declares a body over 1 MiB.
async fn refuse_large(request: Request, next: Next) -> Response {
    let too_big = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|n| n > MAX_BODY_BYTES);
    if too_big {
        return (StatusCode::PAYLOAD_TOO_LARGE, "the request body is larger than 1 MiB").into_response();
    }
    next.run(request).await
}
