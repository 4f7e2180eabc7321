//! `Connection: close` on refusals that can come before the request body is read.
//!
//! The Host guard (403), the `/mcp` token guard (401, 413 by `Content-Length`), the REST API's token check (401) and
//! the body limits answer from the headers alone. hyper then closes the connection rather than read a body nobody
//! wants, so a client that reuses the connection would find it gone ("other side closed"). Saying
//! `Connection: close` on such answers tells the client to open a new one. It is added to every 401, 403 and 413
//! of a request that declared a body, whether or not the body was read by then: a refusal costs the client
//! one new connection at most.

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::Response;

/// `router` with the header added to early refusals.
pub(crate) fn layer(router: Router) -> Router {
    router.layer(middleware::from_fn(mark))
}

async fn mark(request: Request, next: Next) -> Response {
    let body = declares_body(request.headers());
    let mut response = next.run(request).await;
    let refused =
        matches!(response.status(), StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::PAYLOAD_TOO_LARGE);
    if body && refused {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Whether the request says a body follows (`Transfer-Encoding`, or a `Content-Length` other than 0).
fn declares_body(headers: &HeaderMap) -> bool {
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.to_str().ok().and_then(|v| v.trim().parse::<u64>().ok()) != Some(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::routing::post;
    use tower::ServiceExt;

    async fn check(status: StatusCode, length: Option<&str>) -> Option<HeaderValue> {
        let router = layer(Router::new().route("/", post(move || async move { status })));
        let mut request = Request::post("/");
        if let Some(length) = length {
            request = request.header(header::CONTENT_LENGTH, length);
        }
        let body = Body::from("x".repeat(length.and_then(|l| l.parse().ok()).unwrap_or(0)));
        let response = router.oneshot(request.body(body).unwrap()).await.unwrap();
        response.headers().get(header::CONNECTION).cloned()
    }

    #[tokio::test]
    async fn refusals_of_requests_with_a_body_close_the_connection() {
        for status in [StatusCode::UNAUTHORIZED, StatusCode::FORBIDDEN, StatusCode::PAYLOAD_TOO_LARGE] {
            assert_eq!(check(status, Some("3")).await, Some(HeaderValue::from_static("close")), "{status}");
            assert_eq!(check(status, Some("0")).await, None, "{status} without a body");
            assert_eq!(check(status, None).await, None, "{status} without a body");
        }
        assert_eq!(check(StatusCode::OK, Some("3")).await, None);
        assert_eq!(check(StatusCode::BAD_REQUEST, Some("3")).await, None);
    }
}
