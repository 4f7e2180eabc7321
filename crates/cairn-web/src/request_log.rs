//! One `http_request` span for every request `cairn serve` answers (method, route, path, principal, status), ended
//! by one log line with the status and duration, and counted in `cairn_http_responses_total` and
//! `cairn_http_request_duration_seconds`. The route is the access table's pattern (`/api/runs/{id}`), so metrics
//! keep few label values; the access gate records the principal on the span once it knows it. Query strings,
//! headers and bodies are never logged: they may carry credentials.

use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use tracing::Instrument;

use crate::access;

/// `router` with every request logged and counted (the outermost layer, so refusals are counted too).
pub(crate) fn layer(router: Router) -> Router {
    router.layer(middleware::from_fn(observe))
}

async fn observe(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let route = access::rule_for(&method, request.uri().path()).map_or("unmatched", |rule| rule.path);
    let span = tracing::info_span!(
        "http_request",
        method = %method,
        route,
        path = %request.uri().path(),
        principal = tracing::field::Empty,
        status = tracing::field::Empty,
    );
    let response = next.run(request).instrument(span.clone()).await;
    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    span.record("status", status);
    cairn_telemetry::metrics::http_response(method.as_str(), route, status, elapsed);
    span.in_scope(|| tracing::info!(duration_ms = elapsed.as_secs_f64() * 1000.0, "http request"));
    response
}
