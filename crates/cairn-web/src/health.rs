//! `GET /healthz`: answers without a token once the server is ready, and only while the database answers.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use cairn_work::Service;
use serde_json::{Value, json};

/// The health route, asking the database through the work facade.
pub(crate) fn routes(work: Service) -> Router {
    Router::new().route("/healthz", get(healthz)).with_state(work)
}

async fn healthz(State(work): State<Service>) -> (StatusCode, Json<Value>) {
    match work.ping().await {
        Ok(_) => (StatusCode::OK, Json(json!({ "status": "ok" }))),
        Err(err) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "status": "unavailable", "error": format!("database: {err}") })),
        ),
    }
}
