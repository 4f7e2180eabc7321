//! Serving a surface over Streamable HTTP (rmcp's tower service mounted in axum).
//!
//! Sessions are kept for clients of protocol versions before 2026-07-28 (they need them for server-to-client requests
//! such as `roots/list`); newer clients are served statelessly. Given [`SharedSessions`], a session survives its
//! node: any server sharing their rows continues it. The `Host` header must name a loopback address unless more
//! hosts are allowed; [`serve_http`] also refuses browser pages of other origins ([`AllowedHosts`]).

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::SessionStore;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::access::Access;
use crate::drain::InFlight;
use crate::host_guard::AllowedHosts;
use crate::message_limits::MessageLimits;
use crate::one_write::OneWrite;
use crate::server::{Server, ServerFactory};
use crate::session_end::SessionEnd;
use crate::sessions::SharedSessions;

/// Where and how to serve.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Address to bind, e.g. `127.0.0.1:8000`.
    pub addr: SocketAddr,
    /// Path of the MCP endpoint, e.g. `/mcp`.
    pub path: String,
    /// Extra `Host` values to accept besides loopback.
    pub extra_allowed_hosts: Vec<String>,
}

/// The Streamable HTTP endpoint for handlers made by `factory`, to mount in an axum router
/// ([`HttpEndpoint::into_router`]).
///
/// `Host` must be loopback or one of `extra_allowed_hosts`; open streams end when `shutdown` is cancelled. Sessions
/// live in this process only, unless `sessions` keeps them where other nodes see them. A client ending its session
/// is answered `204 No Content` ([`SessionEnd`]); an answer to a posted message that is ready soon goes out in one
/// write ([`OneWrite`](crate::OneWrite)); a posted message too large or nested too deep is answered with its own id
/// ([`MessageLimits`]).
pub fn http_service(
    factory: ServerFactory,
    extra_allowed_hosts: &[String],
    shutdown: &CancellationToken,
    sessions: Option<SharedSessions>,
) -> HttpEndpoint {
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    hosts.extend(extra_allowed_hosts.iter().cloned());
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_cancellation_token(shutdown.child_token());
    config.session_store = sessions.map(|s| Arc::new(s) as Arc<dyn SessionStore>);
    let limit = config.max_request_body_bytes;
    let service = StreamableHttpService::new(move || Ok(factory()), Arc::new(LocalSessionManager::default()), config);
    HttpEndpoint { service: SessionEnd::new(OneWrite::new(MessageLimits::new(service, limit))) }
}

/// A Streamable HTTP endpoint made by [`http_service`].
pub struct HttpEndpoint {
    service: SessionEnd<OneWrite<MessageLimits<StreamableHttpService<Server, LocalSessionManager>>>>,
}

impl HttpEndpoint {
    /// Refuses request bodies larger than `bytes` ([`MessageLimits`], and rmcp's own limit behind it; both behind
    /// any limit of the router).
    pub fn with_max_request_body(self, bytes: usize) -> HttpEndpoint {
        HttpEndpoint { service: self.service.with_max_request_body(bytes) }
    }

    /// The endpoint as a router that answers every path it is given: mount it with `nest_service`. The router hides
    /// the service's type, so the code serving it is compiled here, once, and not in every crate that mounts one.
    pub fn into_router(self) -> axum::Router {
        axum::Router::new().fallback_service(self.service)
    }
}

/// Serves handlers made by `factory` at `options.path` until Ctrl-C or SIGTERM (then it finishes the calls in
/// flight, [`InFlight::drain_on_signal`]).
pub async fn serve_http(factory: ServerFactory, options: HttpOptions) -> std::io::Result<()> {
    let (stopping, closing) = (CancellationToken::new(), CancellationToken::new());
    let service = http_service(factory, &options.extra_allowed_hosts, &closing, None);
    let in_flight = InFlight::new();
    let guard = AllowedHosts::new(&options.extra_allowed_hosts);
    // A loopback server of one user: every call is the local user's (`cairn serve` attaches each caller's own).
    let router = axum::Router::new()
        .nest_service(&options.path, service.into_router())
        .layer(axum::Extension(Access::local()));
    let router = in_flight.layer(guard.protect(router));
    let listener = crate::listener::bind(options.addr).await?;
    let local = axum::serve::Listener::local_addr(&listener)?;
    tracing::info!("serving MCP over Streamable HTTP at http://{local}{}", options.path);
    let drain = tokio::spawn(in_flight.drain_on_signal(stopping.clone(), closing));
    let result = crate::serve_router(listener, router, stopping.cancelled_owned()).await;
    drain.abort();
    result
}
