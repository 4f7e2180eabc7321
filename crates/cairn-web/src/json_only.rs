//! Every REST route that can change something (any method but `GET`, `HEAD` and `OPTIONS` under `/api`) takes
//! `Content-Type: application/json` only, with a body or without one (`POST /api/runs/{id}/cancel` and `…/retry`
//! take none, or `{}`). A web page can make a browser send a request elsewhere without asking the server first only
//! with a form's or plain text's content type or none (a form, `fetch(…, {mode: 'no-cors'})`), so no page reaches
//! these routes that way, not even as the local person of a loopback server. Anything else is answered `415
//! Unsupported Media Type` in the route's error shape, code `unsupported_media_type`, naming the route, the type it
//! got and the fix; nothing behind it runs.
//!
//! [`OptionalJson`] is the body of a route where it may be left out (empty) under that content type.

use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{Json, body::Bytes};
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::access::{Family, rule_for};
use crate::error::ApiError;

/// Refuses a state-changing request that is not `Content-Type: application/json`.
pub(crate) async fn require(request: Request, next: Next) -> Response {
    let method = request.method();
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) || is_json(request.headers()) {
        return next.run(request).await;
    }
    let path = request.uri().path();
    let route = rule_for(method, path).map_or(path, |rule| rule.path);
    let sent = match request.headers().get(header::CONTENT_TYPE) {
        Some(value) => format!("Content-Type: {}", String::from_utf8_lossy(value.as_bytes())),
        None => "no Content-Type".to_owned(),
    };
    let message = format!(
        "{method} {route} takes only Content-Type: application/json (this request has {sent}); send the body as JSON \
         with that header, or the header alone (or {{}}) where there is nothing to send"
    );
    let body = match Family::of(path) {
        Family::WorkRest => json!({"error": {"code": "unsupported_media_type", "message": message, "details": {}}}),
        _ => json!({"error": message, "code": "unsupported_media_type"}),
    };
    (StatusCode::UNSUPPORTED_MEDIA_TYPE, Json(body)).into_response()
}

/// Whether `headers` say `Content-Type: application/json` (parameters such as `charset` allowed).
fn is_json(headers: &HeaderMap) -> bool {
    let value = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    value.split(';').next().is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// A JSON body that may be empty (`None`).
#[derive(Debug)]
pub(crate) struct OptionalJson<T>(pub(crate) Option<T>);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for OptionalJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<OptionalJson<T>, ApiError> {
        let bytes = Bytes::from_request(request, state).await.map_err(|e| invalid(&e.body_text()))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJson(None));
        }
        serde_json::from_slice(&bytes).map(|value| OptionalJson(Some(value))).map_err(|e| invalid(&e.to_string()))
    }
}

fn invalid(reason: &str) -> ApiError {
    ApiError::roscoe(
        StatusCode::BAD_REQUEST,
        "invalid_input",
        format!("the body is not the JSON this route takes ({reason}); send {{}} or leave it empty"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn only_application_json_is_json() {
        let with = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(value));
            is_json(&headers)
        };
        assert!(with("application/json") && with("Application/JSON; charset=utf-8") && with(" application/json ;x=1"));
        for other in ["text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data", "text/json"] {
            assert!(!with(other), "{other}");
        }
        assert!(!is_json(&HeaderMap::new()));
    }
}
