//! How domain errors become HTTP responses: [`ApiError`] (JSON, for `/api`) keeps each surface's error body — the
//! roscoe tools' `{ error, code, … }`, the work tools' `{ error: { code, message, details } }` — and picks the status
//! from the code: 400 for bad input, 401/403 for tokens and scopes, 404 not found, 409 conflicts and state clashes,
//! 500 for server failures. The web pages show the same message and code as HTML (`page_error.rs`).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// An error answered as JSON.
#[derive(Debug, Clone)]
pub(crate) struct ApiError {
    /// The HTTP status.
    pub(crate) status: StatusCode,
    /// The body, in the shape the surface's tools use.
    pub(crate) body: Value,
}

impl ApiError {
    /// A roscoe-shaped error (`{ error, code }`) with `status`.
    pub(crate) fn roscoe(status: StatusCode, code: &str, message: impl Into<String>) -> ApiError {
        ApiError { status, body: json!({ "error": message.into(), "code": code }) }
    }

    /// The stable code of the error, whichever surface it came from.
    pub(crate) fn code(&self) -> &str {
        self.body["code"].as_str().or_else(|| self.body["error"]["code"].as_str()).unwrap_or("internal")
    }

    /// The message for people.
    pub(crate) fn message(&self) -> &str {
        self.body["error"].as_str().or_else(|| self.body["error"]["message"].as_str()).unwrap_or("error")
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

impl From<cairn_roscoe::Error> for ApiError {
    fn from(error: cairn_roscoe::Error) -> ApiError {
        let status = match error.as_code() {
            _ if error.is_internal() => StatusCode::INTERNAL_SERVER_ERROR,
            "io_error" => StatusCode::INTERNAL_SERVER_ERROR,
            "not_found" | "workflow_not_found" => StatusCode::NOT_FOUND,
            "insufficient_scope" => StatusCode::FORBIDDEN,
            "conflict" | "referenced" | "terminal" | "not_paused" | "not_running" | "not_retryable" | "stale_step"
            | "stale_edit" | "wrong_tool" => StatusCode::CONFLICT,
            _ => StatusCode::BAD_REQUEST,
        };
        ApiError { status, body: error.body() }
    }
}

impl From<cairn_work::Error> for ApiError {
    fn from(error: cairn_work::Error) -> ApiError {
        let status = match error.code() {
            "invalid_argument" => StatusCode::BAD_REQUEST,
            "insufficient_scope" | "permission_denied" => StatusCode::FORBIDDEN,
            "not_found" => StatusCode::NOT_FOUND,
            "failed_precondition" | "conflict" => StatusCode::CONFLICT,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError { status, body: error.body() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_follow_the_codes_and_bodies_keep_each_surfaces_shape() {
        let e = ApiError::from(cairn_roscoe::Error::run_not_found());
        assert_eq!((e.status, e.code(), e.message()), (StatusCode::NOT_FOUND, "not_found", "Run not found."));
        let e = ApiError::from(cairn_roscoe::Error::refused("terminal", "the run has ended"));
        assert_eq!(e.status, StatusCode::CONFLICT);
        let e = ApiError::from(cairn_roscoe::Error::NoRepoSource);
        assert_eq!((e.status, e.code()), (StatusCode::BAD_REQUEST, "no_repo_source"));
        let e = ApiError::from(cairn_work::Error::NotFound("no item".into()));
        assert_eq!((e.status, e.code(), e.message()), (StatusCode::NOT_FOUND, "not_found", "no item"));
        assert_eq!(e.body["error"]["code"], "not_found");
    }
}
