//! The answer to a client ending its MCP session (`DELETE` on the endpoint with its `Mcp-Session-Id`): `204 No
//! Content` where rmcp answers `202 Accepted`. The official Python client takes only 200 and 204 as a session ended
//! and otherwise warns "Session termination failed: 202" on every disconnect; nothing is left to accept later, so
//! 204 is also the truer answer. Every other answer (a `202` to a posted notification included) passes unchanged.

use std::task::{Context, Poll};

use futures::TryFutureExt;
use futures::future::{Either, MapOk};
use http::{Method, Request, Response, StatusCode};
use rmcp::transport::streamable_http_server::StreamableHttpService;

use crate::message_limits::MessageLimits;
use crate::one_write::OneWrite;

/// An MCP endpoint whose session ends are answered `204` ([`http_service`](crate::http_service) makes them).
#[derive(Clone)]
pub struct SessionEnd<S> {
    inner: S,
}

impl<S> SessionEnd<S> {
    pub(crate) fn new(inner: S) -> SessionEnd<S> {
        SessionEnd { inner }
    }
}

impl<H, M> SessionEnd<OneWrite<MessageLimits<StreamableHttpService<H, M>>>> {
    /// Refuses request bodies larger than `bytes` ([`MessageLimits`], and rmcp's own limit behind it; both behind
    /// any limit of the router).
    pub fn with_max_request_body(mut self, bytes: usize) -> Self {
        self.inner.inner.limit = bytes;
        self.inner.inner.inner.config.max_request_body_bytes = bytes;
        self
    }
}

type Ended<B> = fn(Response<B>) -> Response<B>;

impl<S, B, R> tower::Service<Request<B>> for SessionEnd<S>
where
    S: tower::Service<Request<B>, Response = Response<R>>,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = Either<S::Future, MapOk<S::Future, Ended<R>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if request.method() == Method::DELETE {
            Either::Right(self.inner.call(request).map_ok(no_content as Ended<R>))
        } else {
            Either::Left(self.inner.call(request))
        }
    }
}

fn no_content<B>(mut response: Response<B>) -> Response<B> {
    if response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

impl<S> std::fmt::Debug for SessionEnd<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionEnd")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_accepted_session_end_becomes_no_content() {
        let accepted = || Response::builder().status(StatusCode::ACCEPTED).body(()).unwrap();
        assert_eq!(no_content(accepted()).status(), StatusCode::NO_CONTENT);
        let missing = Response::builder().status(StatusCode::NOT_FOUND).body(()).unwrap();
        assert_eq!(no_content(missing).status(), StatusCode::NOT_FOUND);
    }
}
