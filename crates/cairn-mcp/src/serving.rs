//! The serving loop every cairn HTTP server runs (`cairn serve`, `deepwork serve --transport http|sse`): HTTP/1.1 on
//! a [`Listener`], with time limits for slow clients and a graceful shutdown.
//!
//! A client has [`HEADER_READ_TIMEOUT`] to send a request's headers (which is also the longest a kept-alive connection
//! waits for its next request), and a request body may stall for at most [`BODY_IDLE_TIMEOUT`] between two pieces;
//! past either, the connection is closed. So a handful of clients that trickle a byte at a time cannot hold sockets
//! forever. Responses have no limit: event streams (server to client) stay open as long as they have something to say.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::serve::Listener as _;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tower::ServiceExt;
use tower_http::timeout::TimeoutBody;

use crate::listener::Listener;

/// How long a client may take to send a request's headers, from the first byte the server waits for.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a request body may stall between two pieces while its handler reads it.
pub const BODY_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves `router` on `listener` until `shutdown` resolves; then closes the listener at once, lets each connection
/// finish the response it is sending (connections waiting for a request close), and returns once all are closed.
pub async fn serve_router(
    mut listener: Listener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT);
    let connections = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let router = router.clone();
        let service = service_fn(move |request: hyper::Request<Incoming>| {
            let mut request = request.map(|body| Body::new(TimeoutBody::new(BODY_IDLE_TIMEOUT, body)));
            // Who is on the other end, for handlers that count requests per client address.
            request.extensions_mut().insert(ConnectInfo(peer));
            router.clone().oneshot(request)
        });
        let connection = connections.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(err) = connection.await {
                tracing::debug!("connection closed: {err}");
            }
        });
    }
    drop(listener);
    connections.shutdown().await;
    Ok(())
}
