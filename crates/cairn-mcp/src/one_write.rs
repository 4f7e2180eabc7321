//! An answer streamed as server-sent events leaves in one write when it is ready soon.
//!
//! rmcp answers a posted request with an event stream whose first event is a priming event (an event id for the
//! client to resume from); the answer follows when the handler returns. hyper sends whatever the body has ready and
//! then waits for more, so every call cost two writes (the headers and the priming event, then the answer) and the
//! client two reads and two wake-ups. Here the response waits up to [`WAIT`] for the first two events, or for the
//! stream's end, and hyper then finds them ready together: one write. A call that takes longer gets its headers and
//! priming event after [`WAIT`] and the rest as it comes, so no answer is ever later than it would have been. Clients
//! older than protocol 2025-11-25 get no priming event at all ([`priming`](crate::priming)).

use std::convert::Infallible;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use futures::StreamExt;
use futures::future::BoxFuture;

use crate::priming;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use http::{Method, Request, Response};

/// How long a posted call's response waits for its answer before it sends what it has.
const WAIT: Duration = Duration::from_millis(50);

/// How many events go in the first write at most: the priming event and the answer.
const FIRST_EVENTS: usize = 2;

/// An MCP endpoint whose answers to posted messages go out in one write ([`http_service`](crate::http_service)
/// makes them).
#[derive(Clone)]
pub struct OneWrite<S> {
    pub(crate) inner: S,
}

impl<S> OneWrite<S> {
    pub(crate) fn new(inner: S) -> OneWrite<S> {
        OneWrite { inner }
    }
}

impl<S, B, R> tower::Service<Request<B>> for OneWrite<S>
where
    S: tower::Service<Request<Body>, Response = Response<R>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
    R: HttpBody<Data = Bytes> + Send + 'static,
    R::Error: Into<axum::BoxError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The clone is ready in our place; we keep the fresh one (tower's usual way to call a service later).
        let fresh = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, fresh);
        Box::pin(async move {
            let posted = request.method() == Method::POST;
            let (parts, body) = request.into_parts();
            let mut version = priming::header_version(&parts.headers);
            let small = parts
                .headers
                .get(CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
                .is_some_and(|length| length <= priming::PEEK_LIMIT);
            let body = if posted && version.is_none() && small {
                match axum::body::to_bytes(Body::new(body), priming::PEEK_LIMIT as usize).await {
                    Ok(bytes) => {
                        version = priming::initialize_version(&bytes);
                        Body::from(bytes)
                    }
                    Err(_) => {
                        let refused = Response::builder().status(400).body(Body::from("the request body broke off"));
                        return Ok(refused.expect("a plain answer"));
                    }
                }
            } else {
                Body::new(body)
            };
            let response = inner.call(Request::from_parts(parts, body)).await?;
            let priming = priming::takes_priming(version.as_deref());
            Ok(if posted { gathered(response, priming).await } else { unprimed(response, priming) })
        })
    }
}

/// Whether `response` is an event stream.
fn streamed<R>(response: &Response<R>) -> bool {
    response.headers().get(CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"))
}

/// The events of `body`, without its first when that is a priming event and the client does not take `priming`.
fn events<R>(body: R, priming: bool) -> impl futures::Stream<Item = Result<Bytes, axum::Error>> + Send
where
    R: HttpBody<Data = Bytes> + Send + 'static,
    R::Error: Into<axum::BoxError>,
{
    let mut first = !priming;
    Body::new(body).into_data_stream().filter(move |chunk| {
        let drop = std::mem::take(&mut first) && chunk.as_ref().is_ok_and(priming::is_priming);
        std::future::ready(!drop)
    })
}

/// `response` as it is, or without its priming event for a client that does not take `priming`.
fn unprimed<R>(response: Response<R>, priming: bool) -> Response<Body>
where
    R: HttpBody<Data = Bytes> + Send + 'static,
    R::Error: Into<axum::BoxError>,
{
    if priming || !streamed(&response) {
        return response.map(Body::new);
    }
    let (parts, body) = response.into_parts();
    Response::from_parts(parts, Body::from_stream(events(body, false)))
}

/// `response` with its first events read ahead (and its priming event left out unless the client takes `priming`),
/// if it is an event stream.
async fn gathered<R>(response: Response<R>, priming: bool) -> Response<Body>
where
    R: HttpBody<Data = Bytes> + Send + 'static,
    R::Error: Into<axum::BoxError>,
{
    if !streamed(&response) {
        return response.map(Body::new);
    }
    let (parts, body) = response.into_parts();
    let first_events = if priming { FIRST_EVENTS } else { FIRST_EVENTS - 1 };
    let mut rest = Box::pin(events(body, priming).fuse());
    let mut ready = Vec::with_capacity(FIRST_EVENTS);
    while ready.len() < first_events {
        match tokio::time::timeout(WAIT, rest.next()).await {
            Ok(Some(chunk)) => ready.push(chunk),
            Ok(None) | Err(_) => break,
        }
    }
    Response::from_parts(parts, Body::from_stream(futures::stream::iter(ready).chain(rest)))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures::FutureExt;
    use tokio::time::{Instant, sleep};
    use tower::ServiceExt;
    use tower::util::BoxCloneService;

    use super::*;

    /// The events the test endpoint streams.
    const PRIMING: &str = "id: 0\nretry: 3000\n\n";
    const ANSWER: &str = "data: {}\n\n";

    /// An endpoint answering with an event stream: a priming event at once, the answer after `answer_after`.
    fn endpoint(answer_after: Duration) -> OneWrite<BoxCloneService<Request<Body>, Response<Body>, Infallible>> {
        OneWrite::new(BoxCloneService::new(tower::service_fn(move |_: Request<Body>| async move {
            let events = futures::stream::iter([Ok::<_, Infallible>(Bytes::from(PRIMING))]).chain(
                futures::stream::once(async move {
                    sleep(answer_after).await;
                    Ok(Bytes::from(ANSWER))
                }),
            );
            let response =
                Response::builder().header(CONTENT_TYPE, "text/event-stream").body(Body::from_stream(events));
            Ok::<_, Infallible>(response.unwrap())
        })))
    }

    /// The chunks of `body` that are ready now, and whether it ended.
    async fn ready_now(body: Body) -> (Vec<Bytes>, bool) {
        let mut stream = body.into_data_stream();
        let mut ready = Vec::new();
        loop {
            match stream.next().now_or_never() {
                Some(Some(chunk)) => ready.push(chunk.unwrap()),
                Some(None) => return (ready, true),
                None => return (ready, false),
            }
        }
    }

    /// A post of a client of 2025-11-25, which takes priming events.
    fn post() -> Request<Body> {
        Request::post("/mcp").header("mcp-protocol-version", "2025-11-25").body(Body::empty()).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn an_older_client_gets_the_answer_without_the_priming_event() {
        for version in [Some("2025-06-18"), None] {
            let mut request = Request::post("/mcp");
            if let Some(version) = version {
                request = request.header("mcp-protocol-version", version);
            }
            let response = endpoint(Duration::from_millis(10)).oneshot(request.body(Body::empty()).unwrap()).await;
            let (ready, ended) = ready_now(response.unwrap().into_body()).await;
            assert_eq!(ready, [ANSWER], "{version:?}: the answer alone");
            assert!(ended);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_ready_soon_comes_with_the_headers_and_the_priming_event() {
        let started = Instant::now();
        let response = endpoint(Duration::from_millis(10)).oneshot(post()).await.unwrap();
        assert_eq!(started.elapsed(), Duration::from_millis(10), "the headers waited for the answer");
        let (ready, ended) = ready_now(response.into_body()).await;
        assert_eq!(ready, [PRIMING, ANSWER], "both events ready for one write");
        assert!(ended);
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_answer_does_not_hold_the_headers_back_longer_than_the_wait() {
        let started = Instant::now();
        let response = endpoint(Duration::from_secs(5)).oneshot(post()).await.unwrap();
        assert_eq!(started.elapsed(), WAIT);
        let mut body = response.into_body().into_data_stream();
        assert_eq!(body.next().await.unwrap().unwrap(), PRIMING);
        assert_eq!(body.next().await.unwrap().unwrap(), ANSWER);
        assert_eq!(started.elapsed(), Duration::from_secs(5), "the answer as soon as it is ready");
    }

    #[tokio::test(start_paused = true)]
    async fn other_requests_pass_unread() {
        let started = Instant::now();
        let get = Request::get("/mcp").header("mcp-protocol-version", "2025-11-25").body(Body::empty()).unwrap();
        let response = endpoint(Duration::from_millis(10)).oneshot(get).await;
        assert_eq!(started.elapsed(), Duration::ZERO, "a GET stream's headers go at once");
        let (ready, ended) = ready_now(response.unwrap().into_body()).await;
        assert_eq!(ready, [PRIMING]);
        assert!(!ended);
    }
}
