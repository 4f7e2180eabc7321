//! The application: which services `cairn serve` has, the router that mounts them, and the serving loop.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::middleware;
use cairn_mcp::{InFlight, Server, SessionRows, SharedSessions};
use cairn_deepwork::{DeepworkServer, RootSource};
use cairn_roscoe::RoscoeServer;
use tokio_util::sync::CancellationToken;

use crate::host_check;
use crate::rate_limit::RateLimit;
use crate::csrf::Csrf;
use crate::server_file::ServerFile;
use crate::state::{DeepworkProject, Web};
use crate::access::{self, Gate};
use crate::{
    api, body_limit, early_close, health, metrics_route, pages, rate_limit, request_log, security_headers,
    tool_groups_query, webhooks, work_mcp,
};

/// Everything `cairn serve` serves: the surfaces' facades (the binary opens the database they share) and how to
/// serve them.
#[derive(Debug, Clone)]
pub struct App {
    /// The roscoe authoring service (its home holds the global workflows and `roscoe.yaml`).
    pub roscoe: cairn_roscoe::Service,
    /// The roscoe run facade (runs in the database, workflows from `roscoe`'s sources).
    pub runs: cairn_roscoe::Runs,
    /// The work facade: work items, spaces, documents, and the accounts, tokens and sign-ins the access gate checks.
    pub work: cairn_work::Service,
    /// Where the MCP endpoints keep the sessions of clients older than protocol 2026-07-28, so any node sharing them
    /// continues a session another node started.
    pub sessions: Arc<dyn SessionRows>,
    /// The DeepWork project, when one was given.
    pub deepwork: Option<DeepworkProject>,
    /// The projects callers may name (the `--project` folders), besides global scope.
    pub reach: cairn_roscoe::Reach,
    /// `Host` names accepted besides loopback (for a server bound to another interface).
    pub extra_allowed_hosts: Vec<String>,
    /// Whether every route but the open ones needs a credential even on loopback (`--require-auth`). A server
    /// that answers other host names, or listens beyond loopback, always needs one.
    pub require_auth: bool,
    /// The rate limit on the MCP endpoints and the REST API.
    pub rate_limit: RateLimit,
    /// The process's metrics, served at `/metrics`.
    pub metrics: cairn_telemetry::Metrics,
}

impl App {
    /// The router with every endpoint: live page streams end when `stopping` is cancelled, MCP streams (answers
    /// being sent included) when `closing` is.
    pub fn router(&self, stopping: &CancellationToken, closing: &CancellationToken) -> Router {
        let roscoe = self.roscoe.clone();
        let runs = self.runs.clone();
        let reach = self.reach.clone();
        let sessions = |endpoint| Some(SharedSessions::new(self.sessions.clone(), endpoint));
        let required = self.require_auth || !self.extra_allowed_hosts.is_empty();
        let web = Web {
            roscoe: self.roscoe.clone(),
            runs: runs.clone(),
            work: self.work.clone(),
            deepwork: self.deepwork.clone(),
            reach: self.reach.clone(),
            csrf: Csrf::new(),
            require_auth: required,
            shutdown: stopping.clone(),
        };
        let roscoe_server = move || Server::new(RoscoeServer::new(roscoe.clone(), runs.clone()).within(reach.clone()));
        let mut router = Router::new()
            .merge(api::routes(web.clone()))
            .merge(pages::routes(web))
            .nest_service(
                "/roscoe/mcp",
                cairn_mcp::http_service(
                    Arc::new(roscoe_server),
                    &self.extra_allowed_hosts,
                    closing,
                    sessions("/roscoe/mcp"),
                )
                .into_router(),
            )
            .merge(health::routes(self.work.clone()))
            .merge(metrics_route::routes(self.metrics.clone()))
            .merge(access::metadata_routes())
            .merge(webhooks::routes(self.runs.clone(), self.reach.clone()))
            .merge(work_mcp::routes(self.work.clone(), sessions("/mcp"), &self.extra_allowed_hosts, closing));
        if let Some(project) = &self.deepwork {
            let server = DeepworkServer::new(project.service.clone(), RootSource::Fixed(project.root.clone()));
            router = router.nest_service(
                "/deepwork/mcp",
                cairn_mcp::http_service(
                    Arc::new(move || Server::new(server.clone())),
                    &self.extra_allowed_hosts,
                    closing,
                    sessions("/deepwork/mcp"),
                )
                .into_router(),
            );
        }
        let router = router.layer(middleware::from_fn(tool_groups_query::check));
        let gate = Gate { work: self.work.clone(), required };
        let router = router.layer(middleware::from_fn_with_state(gate, access::gate));
        let limited = rate_limit::layer(body_limit::layer(router), self.rate_limit);
        // Pages of the public address (run links name it) are the server's own origin too.
        let public_url = std::env::var("ROSCOE_PUBLIC_URL").ok();
        let hosts = cairn_mcp::AllowedHosts::new(&self.extra_allowed_hosts).with_public_url(public_url.as_deref());
        let guarded = host_check::layer(limited, hosts);
        request_log::layer(security_headers::layer(early_close::layer(guarded)))
    }

    /// Serves on `addr` until Ctrl-C or SIGTERM. Then it stops accepting connections, ends the live page streams,
    /// lets every call in flight finish (for up to [`cairn_mcp::DRAIN_LIMIT`]) and ends the MCP streams; the caller
    /// closes the database.
    ///
    /// A server listening beyond loopback requires credentials whatever `require_auth` says.
    pub async fn serve(mut self, addr: SocketAddr) -> std::io::Result<()> {
        self.require_auth |= !addr.ip().is_loopback();
        let stopping = CancellationToken::new();
        let closing = CancellationToken::new();
        let in_flight = InFlight::new();
        let router = in_flight.layer(self.router(&stopping, &closing));
        let listener = cairn_mcp::listener::bind(addr).await?;
        let local = axum::serve::Listener::local_addr(&listener)?;
        let server_file = ServerFile::write(self.roscoe.home(), local, self.reach.roots());
        tracing::info!("cairn serve listening on http://{local}");
        tracing::info!("  web UI         http://{local}/  (sign in at /signin)");
        tracing::info!("  REST API       http://{local}/api  (described at /api/openapi.json)");
        tracing::info!("  roscoe tools   http://{local}/roscoe/mcp");
        match self.reach.roots() {
            [] => tracing::info!("  projects       none: callers may name only global scope (--project DIR serves one)"),
            roots => {
                let roots: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
                tracing::info!("  projects       {}  (callers may name only these, or global scope)", roots.join(", "))
            }
        }
        tracing::info!("  work tools     http://{local}/mcp  (bearer tokens: cairn work token create)");
        match &self.deepwork {
            Some(project) => {
                tracing::info!("  deepwork tools http://{local}/deepwork/mcp  (project {})", project.root.display())
            }
            None => tracing::info!("  deepwork tools off  (--project DIR serves them at /deepwork/mcp)"),
        }
        tracing::info!("  webhooks       http://{local}/hooks/roscoe/<project>/<workflow>  (HMAC-signed POSTs)");
        tracing::info!("  health         http://{local}/healthz");
        tracing::info!("  metrics        http://{local}/metrics  (Prometheus text; scope metrics:read)");
        tracing::info!("  OAuth metadata http://{local}/.well-known/oauth-protected-resource/<endpoint>");
        if self.require_auth || !self.extra_allowed_hosts.is_empty() {
            tracing::info!("  every route but /healthz, assets, sign-in and the webhooks needs a token or a sign-in");
        } else {
            tracing::info!("  loopback only: callers without a token act as the local person (--require-auth to change)");
        }
        let drain = tokio::spawn(in_flight.drain_on_signal(stopping.clone(), closing.clone()));
        let result = cairn_mcp::serve_router(listener, router, stopping.cancelled_owned()).await;
        drain.abort();
        server_file.remove();
        result
    }
}
