//! `Connection: close` on refusals that can come before the request body is read, and the body read out first.
//!
//! The Host guard (403), the `/mcp` token guard (401, 413 by `Content-Length`), the REST API's token check (401), the
//! rate limit (429) and the body limits (413) answer from the headers alone. hyper then closes the connection rather
//! than read a body nobody wants, so a client that reuses the connection would find it gone ("other side closed").
//! Saying `Connection: close` on such answers tells the client to open a new one. It is added to every 401, 403, 413
//! and 429 of a request that declared a body, whether or not the body was read by then: a refusal costs the client
//! one new connection at most.
//!
//! Closing a connection whose unread body still sits in the server's socket makes the kernel reset it, and a reset
//! can reach the client before it read the answer, which it then never sees (it reports "connection reset" while
//! still sending). So before such a refusal goes out, the rest of the body is read and thrown away: up to
//! [`DRAIN_BYTES`] for at most [`DRAIN_TIME`]. A body declared larger than that is not read at all (the reset is
//! then the client's own doing), nor is one whose client waits for `100 Continue` before sending it.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use futures::StreamExt;
use http_body::{Frame, SizeHint};

/// The most of a refused request's body read out before the connection closes: twice the largest body limit.
const DRAIN_BYTES: u64 = 8 * 1024 * 1024;
/// The longest a refused request's body is read for.
const DRAIN_TIME: Duration = Duration::from_secs(5);

/// `router` with the header added to early refusals.
pub(crate) fn layer(router: Router) -> Router {
    router.layer(middleware::from_fn(mark))
}

async fn mark(request: Request, next: Next) -> Response {
    if !declares_body(request.headers()) {
        return next.run(request).await;
    }
    let drainable = drainable(request.headers());
    let (parts, body) = request.into_parts();
    let shared = Shared(Arc::new(Mutex::new(body)));
    let request = Request::from_parts(parts, Body::new(shared.clone()));
    let mut response = next.run(request).await;
    let refused = matches!(
        response.status(),
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::PAYLOAD_TOO_LARGE | StatusCode::TOO_MANY_REQUESTS
    );
    if refused {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        if drainable {
            let mut rest = Body::new(shared).into_data_stream();
            let mut read = 0;
            let _ = tokio::time::timeout(DRAIN_TIME, async {
                while read < DRAIN_BYTES {
                    match rest.next().await {
                        Some(Ok(data)) => read += data.len() as u64,
                        _ => break,
                    }
                }
            })
            .await;
        }
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

/// Whether reading the rest of a refused body is worth it: not over [`DRAIN_BYTES`] by its `Content-Length`, and not
/// waiting for `100 Continue` (reading it would ask the client to send it).
fn drainable(headers: &HeaderMap) -> bool {
    let length = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
    let expects = headers.get(header::EXPECT).is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    !expects && length.is_none_or(|n| n <= DRAIN_BYTES)
}

/// The request body, shared between the handler and this layer, which reads out what the handler left.
#[derive(Clone)]
struct Shared(Arc<Mutex<Body>>);

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Body> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl HttpBody for Shared {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut *self.lock()).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.lock().is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.lock().size_hint()
    }
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
        let refusals = [
            StatusCode::UNAUTHORIZED,
            StatusCode::FORBIDDEN,
            StatusCode::PAYLOAD_TOO_LARGE,
            StatusCode::TOO_MANY_REQUESTS,
        ];
        for status in refusals {
            assert_eq!(check(status, Some("3")).await, Some(HeaderValue::from_static("close")), "{status}");
            assert_eq!(check(status, Some("0")).await, None, "{status} without a body");
            assert_eq!(check(status, None).await, None, "{status} without a body");
        }
        assert_eq!(check(StatusCode::OK, Some("3")).await, None);
        assert_eq!(check(StatusCode::BAD_REQUEST, Some("3")).await, None);
    }

    /// How many bytes of a `chunks`-long body (with `headers`) were read when a handler refused it unread.
    async fn read_of_refused(chunks: usize, headers: &[(&str, &str)]) -> usize {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let read = Arc::new(AtomicUsize::new(0));
        let counter = read.clone();
        let stream = futures::stream::iter(0..chunks).map(move |_| {
            counter.fetch_add(1024, Ordering::SeqCst);
            Ok::<_, std::io::Error>(vec![b'x'; 1024])
        });
        let router = layer(Router::new().route("/", post(|| async { StatusCode::PAYLOAD_TOO_LARGE })));
        let mut request = Request::post("/").header(header::TRANSFER_ENCODING, "chunked");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = router.oneshot(request.body(Body::from_stream(stream)).unwrap()).await.unwrap();
        assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
        read.load(Ordering::SeqCst)
    }

    #[tokio::test]
    async fn the_rest_of_a_refused_body_is_read_out_within_bounds() {
        assert_eq!(read_of_refused(2048, &[]).await, 2048 * 1024, "a 2 MiB body is read to its end");
        assert_eq!(read_of_refused(16384, &[]).await, DRAIN_BYTES as usize, "no more than DRAIN_BYTES is read");
        let waiting = read_of_refused(16, &[("expect", "100-continue")]).await;
        assert_eq!(waiting, 0, "a client waiting to send is not asked to");
        let huge = read_of_refused(16, &[("content-length", "9000000")]).await;
        assert_eq!(huge, 0, "a body declared too big to read out is not read");
    }
}
