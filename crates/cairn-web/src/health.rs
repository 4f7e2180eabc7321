//! `GET /healthz`: answers without a token once the server is ready, and only while the database answers.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use cairn_store::Store;
use serde_json::{Value, json};

/// The health route over `store`.
pub(crate) fn routes(store: Store) -> Router {
    Router::new().route("/healthz", get(healthz)).with_state(store)
}

async fn healthz(State(store): State<Store>) -> (StatusCode, Json<Value>) {
    match store.ping().await {
        Ok(_) => (StatusCode::OK, Json(json!({ "status": "ok" }))),
        Err(err) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "status": "unavailable", "error": format!("database: {err}") })),
        ),
    }
}
