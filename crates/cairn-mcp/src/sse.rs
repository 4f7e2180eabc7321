//! The legacy HTTP+SSE transport (MCP 2024-11-05), which DeepWork's `--transport sse` speaks.
//!
//! `GET /sse` opens an event stream whose first event, `endpoint`, names the URL to post to
//! (`/messages/?session_id=<id>`); every JSON-RPC message a client POSTs there is answered with `202 Accepted` and the
//! server's messages arrive on the stream as `message` events. One handler instance serves each stream. rmcp dropped
//! this transport, so the two halves are joined here with channels. Only loopback `Host` headers and browser origins
//! are accepted ([`AllowedHosts`]), and a message must be posted as `Content-Type: application/json` (`415` otherwise:
//! a page may post `text/plain` across origins without asking first).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::{Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::ServiceExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::drain::{Call, InFlight};
use crate::host_guard::AllowedHosts;
use crate::server::ServerFactory;

type Sessions = Arc<Mutex<HashMap<String, Session>>>;

/// One open stream: where its client's messages go, and its requests still waiting for their answer.
struct Session {
    to_server: mpsc::Sender<ClientJsonRpcMessage>,
    unanswered: Unanswered,
}

type Unanswered = Arc<Mutex<HashMap<RequestId, Call>>>;

struct AppState {
    factory: ServerFactory,
    sessions: Sessions,
    in_flight: InFlight,
    closing: CancellationToken,
}

/// Serves handlers made by `factory` over the legacy SSE transport at `addr` until Ctrl-C or SIGTERM. On the signal
/// it takes no new connection, answers the requests it already has (for up to [`DRAIN_LIMIT`](crate::DRAIN_LIMIT)),
/// then ends the event streams, so that the server stops even while clients stay connected.
pub async fn serve_legacy_sse(factory: ServerFactory, addr: SocketAddr) -> std::io::Result<()> {
    let (stopping, closing) = (CancellationToken::new(), CancellationToken::new());
    let in_flight = InFlight::new();
    let state =
        Arc::new(AppState { factory, sessions: Sessions::default(), in_flight: in_flight.clone(), closing: closing.clone() });
    let router = axum::Router::new()
        .route("/sse", get(open_stream))
        .route("/messages", post(receive_message))
        .route("/messages/", post(receive_message))
        .with_state(state);
    let router = AllowedHosts::new(&[]).protect(router);
    let listener = crate::listener::bind(addr).await?;
    tracing::info!("serving MCP over legacy SSE at http://{}/sse", axum::serve::Listener::local_addr(&listener)?);
    let drain = tokio::spawn(in_flight.drain_on_signal(stopping.clone(), closing));
    let result = crate::serve_router(listener, router, stopping.cancelled_owned()).await;
    drain.abort();
    result
}

async fn open_stream(State(state): State<Arc<AppState>>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let session_id = uuid::Uuid::new_v4().simple().to_string();
    let (to_server, from_client) = mpsc::channel::<ClientJsonRpcMessage>(64);
    let (to_client, from_server) = mpsc::channel::<ServerJsonRpcMessage>(64);
    let unanswered = Unanswered::default();
    let session = Session { to_server, unanswered: unanswered.clone() };
    state.sessions.lock().expect("session map lock").insert(session_id.clone(), session);

    let handler = (state.factory)();
    let sessions = state.sessions.clone();
    let id = session_id.clone();
    tokio::spawn(async move {
        let sink = futures::sink::unfold(to_client, |tx, message: ServerJsonRpcMessage| async move {
            tx.send(message).await.map_err(|_| std::io::Error::other("SSE stream closed"))?;
            Ok::<_, std::io::Error>(tx)
        });
        let incoming = futures::stream::unfold(from_client, |mut rx| async move { rx.recv().await.map(|m| (m, rx)) });
        match handler.serve((Box::pin(sink), Box::pin(incoming))).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            Err(err) => tracing::debug!("legacy SSE session {id} ended before initialization: {err}"),
        }
        sessions.lock().expect("session map lock").remove(&id);
    });

    let endpoint = Event::default().event("endpoint").data(format!("/messages/?session_id={session_id}"));
    let forget = Forget { sessions: state.sessions.clone(), id: session_id };
    let messages = futures::stream::unfold(from_server, |mut rx| async move { rx.recv().await.map(|m| (m, rx)) })
        .take_until(state.closing.clone().cancelled_owned())
        .map(move |message| {
            let _ = &forget;
            let answered = match &message {
                JsonRpcMessage::Response(response) => Some(&response.id),
                JsonRpcMessage::Error(error) => error.id.as_ref(),
                _ => None,
            };
            if let Some(id) = answered {
                unanswered.lock().expect("unanswered map lock").remove(id);
            }
            let json = serde_json::to_string(&message).expect("JSON-RPC messages serialize");
            Ok(Event::default().event("message").data(json))
        });
    let events = futures::stream::once(async move { Ok(endpoint) }).chain(messages);
    Sse::new(events).keep_alive(KeepAlive::default())
}

/// Forgets a session when its event stream goes (the client left, or the server is closing): its requests stop
/// counting as in flight, and with its sender gone its handler stops.
struct Forget {
    sessions: Sessions,
    id: String,
}

impl Drop for Forget {
    fn drop(&mut self) {
        self.sessions.lock().expect("session map lock").remove(&self.id);
    }
}

#[derive(serde::Deserialize)]
struct SessionQuery {
    session_id: Option<String>,
}

async fn receive_message(
    State(state): State<Arc<AppState>>,
    Query(query): Query<SessionQuery>,
    headers: HeaderMap,
    body: String,
) -> Response {
    if !is_json(&headers) {
        let message = "Unsupported Media Type: post each JSON-RPC message with Content-Type: application/json";
        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, message).into_response();
    }
    let Some(session_id) = query.session_id else {
        return (StatusCode::BAD_REQUEST, "session_id is required").into_response();
    };
    let session = state
        .sessions
        .lock()
        .expect("session map lock")
        .get(&session_id)
        .map(|session| (session.to_server.clone(), session.unanswered.clone()));
    let Some((sender, unanswered)) = session else {
        return (StatusCode::NOT_FOUND, "Could not find session").into_response();
    };
    let message: ClientJsonRpcMessage = match serde_json::from_str(&body) {
        Ok(message) => message,
        Err(err) => return (StatusCode::BAD_REQUEST, format!("Could not parse message: {err}")).into_response(),
    };
    if let JsonRpcMessage::Request(request) = &message {
        // Counted until its answer goes out on the stream (or the session ends).
        unanswered.lock().expect("unanswered map lock").insert(request.id.clone(), Call::start(&state.in_flight));
    }
    match sender.send(message).await {
        Ok(()) => (StatusCode::ACCEPTED, "Accepted").into_response(),
        Err(_) => (StatusCode::GONE, "Session closed").into_response(),
    }
}

/// Whether the request says its body is JSON (`application/json`, parameters such as `charset` allowed).
fn is_json(headers: &HeaderMap) -> bool {
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/json")
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn only_json_is_taken() {
        let with = |content_type: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_str(content_type).unwrap());
            is_json(&headers)
        };
        assert!(with("application/json") && with("Application/JSON; charset=utf-8"));
        assert!(!with("text/plain") && !with("application/x-www-form-urlencoded") && !with("application/jsonx"));
        assert!(!is_json(&HeaderMap::new()));
    }
}
