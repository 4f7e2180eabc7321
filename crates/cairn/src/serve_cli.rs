//! `cairn serve`: the HTTP server (MCP endpoints, health, the REST API and the web UI) on the embedded SQLite
//! database by default.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use cairn_store::Store;
use cairn_telemetry::Metrics;
use cairn_telemetry::metrics::Sampler;
use cairn_web::{App, DeepworkProject, RateLimit};

use crate::deepwork_cli;
use crate::home::cairn_home;
use crate::mcp_sessions::DatabaseSessions;

/// `cairn serve` options.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on. Loopback by default; binding elsewhere also needs `--allowed-host`.
    #[arg(long, env = "CAIRN_ADDR", default_value = "127.0.0.1:7777")]
    pub addr: SocketAddr,
    /// A project folder to serve (repeatable): callers may name only these folders (and what is inside them) as
    /// `cwd`, or global scope. The first is also the DeepWork project served at `/deepwork/mcp` and the web UI's
    /// default workspace.
    #[arg(long = "project", value_name = "DIR")]
    pub projects: Vec<PathBuf>,
    /// Database URL (`sqlite://PATH` or `postgres://…`). Default: the SQLite file `$CAIRN_HOME/cairn.db`.
    #[arg(long, env = "CAIRN_DATABASE_URL", value_name = "URL")]
    pub database_url: Option<String>,
    /// A `Host` name to accept besides loopback (repeatable), e.g. the name of a reverse proxy. A server that
    /// answers other names needs a token (or a sign-in) on every route but /healthz, assets and sign-in.
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub allowed_hosts: Vec<String>,
    /// Require a token (or a browser sign-in) on every route but /healthz, assets and sign-in even on loopback.
    /// Always on when the server listens beyond loopback or answers other host names.
    #[arg(long, env = "CAIRN_REQUIRE_AUTH", value_parser = clap::builder::BoolishValueParser::new(), num_args = 0..=1, default_missing_value = "true", default_value = "false")]
    pub require_auth: bool,
    /// Requests a minute each client (a bearer token, or an address without one) may send to the MCP endpoints and
    /// the REST API; over it the answer is 429 with Retry-After. Protocol housekeeping (initialize, ping,
    /// notifications, opening and ending a session) never counts. 0 turns the limit off. Default: 6000 on a server
    /// that needs credentials (`--require-auth`, beyond loopback, or `--allowed-host`), none on a loopback-only one.
    #[arg(long, env = "CAIRN_RATE_LIMIT", value_name = "N")]
    pub rate_limit: Option<u32>,
    /// How many of those requests may come at once (at most `--rate-limit`).
    #[arg(long, env = "CAIRN_RATE_LIMIT_BURST", value_name = "N", default_value_t = RateLimit::DEFAULT_BURST)]
    pub rate_limit_burst: u32,
    /// The lease of a work-item claim made without `lease_seconds` (e.g. 30m): unless its holder renews it
    /// (work_heartbeat) the item opens again when it runs out. Default: no lease.
    #[arg(long, env = "CAIRN_DEFAULT_LEASE", value_name = "SPAN", value_parser = crate::span::parse_span)]
    pub default_lease: Option<std::time::Duration>,
    /// Count a request without a token for the last address of its X-Forwarded-For header, not for its peer. Only
    /// behind a reverse proxy that sets that header: anyone else could name any address.
    #[arg(long, env = "CAIRN_TRUST_FORWARDED_FOR")]
    pub trust_forwarded_for: bool,
}

/// Runs `cairn serve`.
pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let home = cairn_home();
    let url = args.database_url.unwrap_or_else(|| Store::default_url(&home));
    let store = Store::open(&url).await.context("cairn serve needs its database")?;
    let dirs = args.projects.into_iter().map(|dir| deepwork_cli::project_dir(Some(dir))).collect::<Result<Vec<_>, _>>()?;
    let reach = cairn_roscoe::Reach::projects(&dirs).map_err(|e| anyhow::anyhow!("--project: {e}"))?;
    let deepwork = match dirs.first() {
        Some(dir) => Some(DeepworkProject {
            root: dir.clone(),
            service: deepwork_cli::service(None, cairn_deepwork::HostNames::default())?,
        }),
        None => None,
    };
    let metrics = Metrics::install().map_err(anyhow::Error::msg)?.with_sampler(sampler(store.clone()));
    let roscoe = cairn_roscoe::Service::new(home);
    let runs = cairn_roscoe::Runs::new(store.clone(), roscoe.clone());
    // Server-executed runs whose process stopped mid-call make their calls again.
    let resuming = runs.clone();
    tokio::spawn(async move {
        if let Err(error) = resuming.resume_server_runs().await {
            tracing::warn!("could not resume server-executed runs: {error}");
        }
    });
    // Human steps left unanswered take their timeout route on time, whether or not anyone reads the run.
    runs.keep_time();
    // Run notifications queued in this database go out to the operator's notify targets, retried until delivered.
    runs.keep_notifying();
    // Workflows' `schedule` / `every` triggers start their runs, one per slot across the database's servers.
    runs.keep_schedules(reach.roots().to_vec());
    // Claims whose holder stopped renewing their lease end, on whichever server of the database sweeps first.
    let work = cairn_work::Service::new(store.clone()).with_default_lease(args.default_lease);
    work.sweep_leases();
    // A server only its own machine reaches, without credentials, is one person's: no limit unless asked.
    let open = args.require_auth || !args.addr.ip().is_loopback() || !args.allowed_hosts.is_empty();
    let app = App {
        runs,
        roscoe,
        work,
        sessions: Arc::new(DatabaseSessions::new(store.clone())),
        deepwork,
        reach,
        extra_allowed_hosts: args.allowed_hosts,
        require_auth: args.require_auth,
        rate_limit: RateLimit {
            per_minute: args.rate_limit.unwrap_or(if open { RateLimit::DEFAULT_PER_MINUTE } else { 0 }),
            burst: args.rate_limit_burst,
            trust_forwarded_for: args.trust_forwarded_for,
        },
        metrics,
    };
    let served = app.serve(args.addr).await;
    store.close().await;
    served.with_context(|| format!("cannot serve on {}", args.addr))
}

/// Reads the values `/metrics` counts on demand from `store`: its pool, and the runs by status (a status no run has
/// any more reads 0).
fn sampler(store: Store) -> Sampler {
    let seen = Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::<String>::new()));
    Arc::new(move || {
        let (store, seen) = (store.clone(), seen.clone());
        Box::pin(async move {
            let (idle, in_use) = store.pool_connections();
            cairn_telemetry::metrics::db_pool(idle, in_use);
            match store.runs_by_status().await {
                Ok(counts) => {
                    let mut seen = seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    for status in seen.iter().filter(|s| !counts.iter().any(|(c, _)| c == *s)) {
                        cairn_telemetry::metrics::runs(status, 0);
                    }
                    for (status, count) in counts {
                        cairn_telemetry::metrics::runs(&status, count.max(0) as u64);
                        seen.insert(status);
                    }
                }
                Err(error) => tracing::warn!("/metrics cannot count the runs: {error}"),
            }
        })
    })
}
