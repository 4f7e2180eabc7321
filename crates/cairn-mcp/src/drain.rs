//! Graceful shutdown's drain: counts the calls still being answered, so that on SIGTERM a server stops accepting
//! connections at once but ends its MCP streams only once every call in flight has its answer.
//!
//! A call is a `POST` (an MCP request, or a REST change where the server has an API). Its answer may be a stream
//! (rmcp answers MCP calls over SSE, and cancelling the service's token cuts those streams off), so a call counts
//! until its response body is done or dropped, not merely until the handler returns. The legacy SSE transport
//! answers on another stream than the `POST`'s, so it counts its calls itself ([`Call::start`]).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::Response;
use futures::StreamExt;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How long a stopping server waits for the calls in flight (under the 30 s a supervisor commonly allows between
/// SIGTERM and SIGKILL).
pub const DRAIN_LIMIT: Duration = Duration::from_secs(25);

/// The number of calls being answered. Cheap to clone.
#[derive(Debug, Clone)]
pub struct InFlight {
    count: Arc<watch::Sender<usize>>,
}

impl InFlight {
    /// No call yet.
    pub fn new() -> InFlight {
        InFlight { count: Arc::new(watch::Sender::new(0)) }
    }

    /// `router` with its calls counted.
    pub fn layer(&self, router: Router) -> Router {
        router.layer(middleware::from_fn_with_state(self.clone(), track))
    }

    /// Resolves once no call is being answered.
    pub async fn idle(&self) {
        let mut count = self.count.subscribe();
        let _ = count.wait_for(|n| *n == 0).await;
    }

    /// Waits for Ctrl-C or SIGTERM, then cancels `stopping` (the server stops accepting connections; streams that
    /// carry no answer end), waits until no call is in flight (for up to [`DRAIN_LIMIT`]) and cancels `closing` (the
    /// MCP streams end).
    pub async fn drain_on_signal(self, stopping: CancellationToken, closing: CancellationToken) {
        shutdown_signal().await;
        tracing::info!("stopping: no new connections; finishing the calls in flight");
        stopping.cancel();
        if tokio::time::timeout(DRAIN_LIMIT, self.idle()).await.is_err() {
            tracing::warn!("calls still in flight after {} s are cut off", DRAIN_LIMIT.as_secs());
        }
        closing.cancel();
    }
}

impl Default for InFlight {
    fn default() -> InFlight {
        InFlight::new()
    }
}

/// One call being answered; dropping it ends the call.
#[derive(Debug)]
pub(crate) struct Call(InFlight);

impl Call {
    /// Counts a call until the returned guard is dropped (for transports that answer off the request, such as the
    /// legacy SSE one).
    pub(crate) fn start(in_flight: &InFlight) -> Call {
        in_flight.count.send_modify(|n| *n += 1);
        Call(in_flight.clone())
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        self.0.count.send_modify(|n| *n -= 1);
    }
}

async fn track(State(in_flight): State<InFlight>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let call = Call::start(&in_flight);
    let (parts, body) = next.run(request).await.into_parts();
    // The call ends with the last chunk of its answer (or when the client goes away and the body is dropped).
    let body = body.into_data_stream().map(move |chunk| {
        let _ = &call;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("installing a SIGTERM handler succeeds in a tokio runtime");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

#[cfg(test)]
mod tests {
    use axum::routing::post;
    use tower::ServiceExt;

    use super::*;

    #[tokio::test]
    async fn a_call_counts_until_its_answer_is_read() {
        let in_flight = InFlight::new();
        let router = in_flight.layer(Router::new().route("/call", post(|| async { "done" })));
        let request = Request::builder().method("POST").uri("/call").body(Body::empty()).unwrap();
        let response = router.oneshot(request).await.unwrap();
        assert_eq!(*in_flight.count.borrow(), 1, "the answer is not read yet");
        let body = axum::body::to_bytes(response.into_body(), 1024).await.unwrap();
        assert_eq!(&body[..], b"done");
        assert_eq!(*in_flight.count.borrow(), 0);
        in_flight.idle().await;
    }
}
