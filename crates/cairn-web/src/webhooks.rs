//! `POST /hooks/roscoe/{project}/{workflow}`: the inbound webhooks that start runs. The route takes no token or
//! sign-in — the request's HMAC signature is its credential, checked by roscoe's run facade
//! ([`cairn_roscoe::Runs::webhook`]), which also finds the workflow, maps the body to the run's input, dedupes
//! deliveries and starts the run. Here: the request's parts in, the answer out — `202 { runId, url }` for a new run,
//! `200 { runId, url, repeated: true }` for a delivery seen before, `401` for a signature that does not hold, `404`
//! for no such webhook, `400` for a body that is not JSON or not the workflow's input, `403` for a repo workflow's
//! scripts nobody holding `roscoe:exec` approved, `409` (with `Retry-After`) while the same delivery is still starting
//! elsewhere. Bodies are limited to 1 MiB (`body_limit.rs`).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use cairn_roscoe::runs::webhook::{WebhookDelivery, WebhookHeaders};
use cairn_roscoe::{Reach, Runs};
use serde_json::json;

use crate::error::ApiError;

/// What the webhook route needs: the run facade and the projects the server serves.
#[derive(Clone, Debug)]
struct Hooks {
    runs: Runs,
    reach: Reach,
}

/// The webhook route.
pub(crate) fn routes(runs: Runs, reach: Reach) -> Router {
    Router::new().route("/hooks/roscoe/{project}/{workflow}", post(deliver)).with_state(Hooks { runs, reach })
}

async fn deliver(
    State(hooks): State<Hooks>,
    Path((project, workflow)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let signed = WebhookHeaders::read(|name| headers.get(name).and_then(|v| v.to_str().ok()));
    let delivery = WebhookDelivery { project: &project, workflow: &workflow, headers: &signed, body: &body };
    match hooks.runs.webhook(&hooks.reach, delivery).await {
        Ok(started) => {
            let status = if started.repeated { StatusCode::OK } else { StatusCode::ACCEPTED };
            let mut body = json!({ "runId": started.run_id, "url": started.url });
            if started.repeated {
                body["repeated"] = true.into();
            }
            (status, Json(body)).into_response()
        }
        Err(error) => refusal(error),
    }
}

/// The answer to a refused request: the facade's error body, with the webhook's own statuses.
fn refusal(error: cairn_roscoe::Error) -> Response {
    let status = match error.as_code() {
        "bad_signature" => Some(StatusCode::UNAUTHORIZED),
        "delivery_in_progress" => Some(StatusCode::CONFLICT),
        _ => None,
    };
    let retry = error.as_code() == "delivery_in_progress";
    let mut response = match status {
        Some(status) => ApiError { status, body: error.body() }.into_response(),
        None => ApiError::from(error).into_response(),
    };
    if retry {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
    }
    response
}
