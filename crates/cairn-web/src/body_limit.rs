//! Request body limits on every route of `cairn serve`, by path.
//!
//! | routes | limit | the largest legitimate body |
//! | --- | --- | --- |
//! | `/mcp` | 1 MiB | a work document (at most 512 KiB) in a JSON-RPC call |
//! | `/hooks/…` | 1 MiB | a webhook's JSON body (GitHub's payloads are at most 25 MB, most far below 1 MiB) |
//! | `/roscoe/mcp`, `/deepwork/mcp`, `/api/…` | 4 MiB | a workflow (at most 1 MiB of YAML), escaped into JSON |
//! | everything else (the pages' forms, sign-in) | 64 KiB | a decision's comment or a token |
//!
//! A request whose `Content-Length` is over its route's limit is answered `413 Payload Too Large` at once, before
//! the body is read; a body sent without a length (chunked) is counted as it is read and cut off at the limit, and
//! whatever the handler then made of the failed read, the answer is the same 413. The body of a 413 is JSON,
//! `{ "error": "…", "code": "payload_too_large", "limit_bytes": N }`. axum's own default limit (2 MB for its
//! extractors) is switched off so that this table is the one in force.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use http_body::{Frame, SizeHint};
use serde_json::json;

use crate::error::ApiError;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

/// The limit of `/mcp` (work documents are at most 512 KiB).
const WORK_MCP: u64 = MIB;
/// The limit of the webhooks that start runs.
const HOOKS: u64 = MIB;
/// The limit of the other MCP endpoints and the REST API (workflows are at most 1 MiB of YAML).
const TOOLS: u64 = 4 * MIB;
/// The limit of every other route: the pages' forms.
const PAGES: u64 = 64 * KIB;

/// The largest body a request to `path` may carry.
fn limit_for(path: &str) -> u64 {
    let under = |prefix: &str| path.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    if under("/mcp") {
        WORK_MCP
    } else if under("/hooks") {
        HOOKS
    } else if under("/roscoe/mcp") || under("/deepwork/mcp") || under("/api") {
        TOOLS
    } else {
        PAGES
    }
}

/// `router` with every request's body limited.
pub(crate) fn layer(router: Router) -> Router {
    router.layer(DefaultBodyLimit::disable()).layer(middleware::from_fn(limit))
}

async fn limit(request: Request, next: Next) -> Response {
    let max = limit_for(request.uri().path());
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > max) {
        return too_large(request.uri().path(), max);
    }
    let path = request.uri().path().to_owned();
    let exceeded = Arc::new(AtomicBool::new(false));
    let flag = exceeded.clone();
    let request = request.map(|inner| Body::new(Capped { inner, left: max, exceeded: flag }));
    let response = next.run(request).await;
    if exceeded.load(Ordering::Acquire) { too_large(&path, max) } else { response }
}

/// `413` saying which limit the body broke.
fn too_large(path: &str, max: u64) -> Response {
    let size = if max >= MIB { format!("{} MiB", max / MIB) } else { format!("{} KiB", max / KIB) };
    let message = format!("the request body is larger than {size}, the limit of {path}; send a smaller one");
    let body = json!({ "error": message, "code": "payload_too_large", "limit_bytes": max });
    ApiError { status: StatusCode::PAYLOAD_TOO_LARGE, body }.into_response()
}

/// A body that fails once more than `left` bytes were read, and says so in `exceeded`.
struct Capped {
    inner: Body,
    left: u64,
    exceeded: Arc<AtomicBool>,
}

/// The error a [`Capped`] body reads as once it passed its limit.
#[derive(Debug)]
struct TooLarge;

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body is over its limit")
    }
}

impl std::error::Error for TooLarge {}

impl HttpBody for Capped {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        let frame = match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            other => return other,
        };
        let size = frame.data_ref().map_or(0, |data| data.len() as u64);
        if size > this.left {
            this.exceeded.store(true, Ordering::Release);
            return Poll::Ready(Some(Err(axum::Error::new(TooLarge))));
        }
        this.left -= size;
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::post;
    use tower::ServiceExt;

    #[test]
    fn limits_go_by_path() {
        assert_eq!(limit_for("/mcp"), MIB);
        assert_eq!(limit_for("/mcp/"), MIB);
        assert_eq!(limit_for("/hooks/roscoe/global/release"), MIB);
        assert_eq!(limit_for("/roscoe/mcp"), 4 * MIB);
        assert_eq!(limit_for("/deepwork/mcp"), 4 * MIB);
        assert_eq!(limit_for("/api/validate"), 4 * MIB);
        assert_eq!(limit_for("/apiary"), 64 * KIB);
        assert_eq!(limit_for("/mcpx"), 64 * KIB);
        assert_eq!(limit_for("/signin"), 64 * KIB);
    }

    /// A handler that reads the body as text and answers 400 when it cannot (not 413).
    async fn read(body: Body) -> Response {
        match axum::body::to_bytes(body, usize::MAX).await {
            Ok(bytes) => format!("read {}", bytes.len()).into_response(),
            Err(error) => (StatusCode::BAD_REQUEST, error.to_string()).into_response(),
        }
    }

    async fn send(length: Option<usize>, chunks: Vec<usize>) -> (StatusCode, String) {
        let router = layer(Router::new().route("/signin", post(read)));
        let stream = futures::stream::iter(chunks.into_iter().map(|n| Ok::<_, std::io::Error>(vec![b'x'; n])));
        let mut request = Request::post("/signin");
        if let Some(length) = length {
            request = request.header(header::CONTENT_LENGTH, length);
        }
        let response = router.oneshot(request.body(Body::from_stream(stream)).unwrap()).await.unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_413_whether_declared_or_streamed() {
        let limit = 64 * 1024;
        assert_eq!(send(Some(limit), vec![limit]).await, (StatusCode::OK, format!("read {limit}")));
        assert_eq!(send(None, vec![limit / 2, limit / 2]).await, (StatusCode::OK, format!("read {limit}")));
        let (status, body) = send(Some(limit + 1), vec![limit + 1]).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert!(body.contains("larger than 64 KiB, the limit of /signin"), "{body}");
        let (status, body) = send(None, vec![limit / 2, limit / 2, 1]).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "a streamed body is cut off: {body}");
        assert!(body.contains("\"code\":\"payload_too_large\""), "{body}");
    }
}
