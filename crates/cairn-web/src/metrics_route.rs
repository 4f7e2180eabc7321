//! `GET /metrics`: every metric of this node in the Prometheus text format ([`cairn_telemetry::Metrics`]), behind
//! the `metrics:read` scope like every other route of a server that needs credentials (a scraper holds a token with
//! only that scope). Values read on demand (runs by status, the database pool) are read just before.

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use cairn_telemetry::Metrics;

/// The metrics route.
pub(crate) fn routes(metrics: Metrics) -> Router {
    Router::new().route("/metrics", get(metrics_text)).with_state(metrics)
}

async fn metrics_text(State(metrics): State<Metrics>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], metrics.render().await)
}
