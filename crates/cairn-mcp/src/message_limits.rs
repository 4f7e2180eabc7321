//! What a message posted to a Streamable HTTP endpoint may be, checked before rmcp reads it: at most the endpoint's
//! body limit, and nested at most [`MAX_DEPTH`](crate::shallow::MAX_DEPTH) levels deep, as on stdio.
//!
//! rmcp parses whatever fits serde_json's own recursion limit (128 levels) and answers the rest `415` with a line of
//! text, so a client waiting for its request's id never hears of it. Here a message nested too deep gets the
//! JSON-RPC error stdio gives it, `-32600` with the request's own id, read from its top level without building it
//! ([`crate::shallow`]): `200` as rmcp answers a call's error, or `400` when the message names no id it can be
//! answered with. A body over the limit is answered `413` with the same kind of error, its id read from the part that
//! came within the limit. Requests other than `POST` pass unread.

use std::convert::Infallible;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use futures::StreamExt;
use futures::future::BoxFuture;
use http::header::CONTENT_TYPE;
use http::{Method, Request, Response, StatusCode};
use rmcp::model::ErrorData;

use crate::shallow;
use crate::verdict::{Fault, too_deep};

/// An MCP endpoint whose posted messages are held to a size and a depth ([`http_service`](crate::http_service)
/// makes them).
#[derive(Clone)]
pub struct MessageLimits<S> {
    pub(crate) inner: S,
    /// The largest body a posted message may have, in bytes.
    pub(crate) limit: usize,
}

impl<S> MessageLimits<S> {
    pub(crate) fn new(inner: S, limit: usize) -> MessageLimits<S> {
        MessageLimits { inner, limit }
    }
}

impl<S, B, R> tower::Service<Request<B>> for MessageLimits<S>
where
    S: tower::Service<Request<Body>, Response = Response<R>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
    R: HttpBody<Data = Bytes> + Send + 'static,
    R::Error: Into<axum::BoxError>,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The service made ready is the one called; its clone waits for the next request.
        let fresh = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, fresh);
        let limit = self.limit;
        Box::pin(async move {
            let request = if request.method() == Method::POST {
                match checked(request, limit).await {
                    Ok(request) => request,
                    Err(refusal) => return Ok(refusal),
                }
            } else {
                request.map(Body::new)
            };
            Ok(inner.call(request).await?.map(Body::new))
        })
    }
}

/// `request` with its body read whole, or the answer that refuses it.
async fn checked<B>(request: Request<B>, limit: usize) -> Result<Request<Body>, Response<Body>>
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    let (parts, body) = request.into_parts();
    let mut chunks = Body::new(body).into_data_stream();
    let mut read = Vec::new();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|error| {
            let message = format!("cannot read the request body: {error}");
            Response::builder().status(StatusCode::BAD_REQUEST).body(Body::from(message)).expect("a valid response")
        })?;
        if read.len() + chunk.len() > limit {
            read.extend_from_slice(&chunk[..limit - read.len()]);
            let message = format!(
                "Invalid Request: the message is larger than {}, the most this endpoint takes; send a smaller one.",
                size(limit)
            );
            let fault = Fault::new(shallow::request_id_of_start(&read), ErrorData::invalid_request(message, None));
            return Err(answer(StatusCode::PAYLOAD_TOO_LARGE, &fault));
        }
        read.extend_from_slice(&chunk);
    }
    if shallow::nests_too_deep(&read) {
        let fault = too_deep(shallow::request_id(&read));
        let status = if fault.id.is_some() { StatusCode::OK } else { StatusCode::BAD_REQUEST };
        return Err(answer(status, &fault));
    }
    Ok(Request::from_parts(parts, Body::from(read)))
}

/// `fault`'s JSON-RPC error as the answer, with `status`.
fn answer(status: StatusCode, fault: &Fault) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(CONTENT_TYPE, "application/json")
        .body(Body::from(fault.answer()))
        .expect("a valid response")
}

/// `4 MiB`, or a number of bytes.
fn size(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) { format!("{} MiB", bytes / MIB) } else { format!("{bytes} bytes") }
}

impl<S> std::fmt::Debug for MessageLimits<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageLimits").field("limit", &self.limit).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use tower::ServiceExt;

    use super::*;

    /// An endpoint that answers with the body it was given.
    fn echo() -> MessageLimits<tower::util::BoxCloneService<Request<Body>, Response<Body>, Infallible>> {
        let inner = tower::service_fn(|request: Request<Body>| async move {
            Ok::<_, Infallible>(Response::new(request.into_body()))
        });
        MessageLimits::new(tower::util::BoxCloneService::new(inner), 1000)
    }

    async fn post(body: String) -> (StatusCode, Value) {
        let request = Request::post("/mcp").body(Body::from(body)).unwrap();
        let response = echo().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    fn call(id: &str, x: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t","arguments":{{"x":{x}}}}}}}"#)
    }

    #[tokio::test]
    async fn a_message_within_the_limits_passes_whole() {
        let message = call("1", &format!("{}{}", "[".repeat(60), "]".repeat(60)));
        assert_eq!(post(message.clone()).await, (StatusCode::OK, serde_json::from_str(&message).unwrap()));
    }

    #[tokio::test]
    async fn a_message_nested_too_deep_is_answered_with_its_id() {
        let (status, answer) = post(call("2", &format!("{}{}", "[".repeat(100), "]".repeat(100)))).await;
        assert_eq!((status, &answer["id"], &answer["error"]["code"]), (StatusCode::OK, &json!(2), &json!(-32600)));
        assert!(answer["error"]["message"].as_str().unwrap().contains("more than 64 levels deep"), "{answer}");
        let (status, answer) = post(format!("{}{}", "[".repeat(100), "]".repeat(100))).await;
        assert_eq!((status, &answer["id"]), (StatusCode::BAD_REQUEST, &Value::Null), "no id to answer with");
    }

    #[tokio::test]
    async fn a_message_over_the_limit_is_answered_with_the_id_of_its_start() {
        let (status, answer) = post(call("3", &format!("\"{}\"", "x".repeat(2000)))).await;
        assert_eq!((status, &answer["id"], &answer["error"]["code"]), (StatusCode::PAYLOAD_TOO_LARGE, &json!(3), &json!(-32600)));
        assert!(answer["error"]["message"].as_str().unwrap().contains("larger than 1000 bytes"), "{answer}");
    }
}
