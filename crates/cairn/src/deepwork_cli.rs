//! The `deepwork` command tree: `serve` (the MCP server, DeepWork's options) and `jobs get-stack`.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use anyhow::Context;
use cairn_deepwork::discovery::split_folder_list;
use cairn_deepwork::{Config, Deepwork, DeepworkServer, RootSource, standard_jobs};
use cairn_mcp::HttpOptions;
use clap::{Parser, Subcommand, ValueEnum};

use crate::home::cairn_home;

/// The `deepwork` program (the same as `cairn deepwork`).
#[derive(Debug, Parser)]
#[command(name = "deepwork", version, about = "DeepWork-compatible workflow server (cairn)")]
pub struct DeepworkCli {
    /// What to do.
    #[command(subcommand)]
    pub command: DeepworkCommand,
}

/// deepwork commands.
#[derive(Debug, Subcommand)]
pub enum DeepworkCommand {
    /// Serve the workflow tools over MCP.
    Serve(ServeArgs),
    /// Job and session commands.
    Jobs {
        /// The jobs command.
        #[command(subcommand)]
        command: JobsCommand,
    },
}

/// `deepwork jobs` commands.
#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// Print the active workflow sessions of a project as JSON (used to resume after context compaction).
    GetStack {
        /// Project root (default: current directory).
        #[arg(long)]
        path: Option<PathBuf>,
    },
}

/// Transports `deepwork serve` speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    /// JSON-RPC over stdin/stdout.
    Stdio,
    /// Streamable HTTP at `/mcp`.
    Http,
    /// The legacy HTTP+SSE protocol (`GET /sse`, `POST /messages/`).
    Sse,
}

/// `deepwork serve` options.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Project root (default: the client's workspace root, else the current directory).
    #[arg(long)]
    pub path: Option<PathBuf>,
    /// How to talk to the client.
    #[arg(long, value_enum, default_value_t = Transport::Stdio)]
    pub transport: Transport,
    /// Port for the HTTP and SSE transports.
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Platform name (e.g. `claude`); sessions are kept per platform.
    #[arg(long)]
    pub platform: Option<String>,
    /// Accepted for compatibility; has no effect.
    #[arg(long, hide = true)]
    pub no_quality_gate: bool,
    /// Accepted for compatibility; has no effect.
    #[arg(long, hide = true)]
    pub external_runner: Option<String>,
}

/// Runs a deepwork command.
pub async fn run(command: DeepworkCommand) -> anyhow::Result<()> {
    match command {
        DeepworkCommand::Serve(args) => serve(args).await,
        DeepworkCommand::Jobs { command: JobsCommand::GetStack { path } } => get_stack(path),
    }
}

fn service(platform: Option<String>) -> anyhow::Result<Deepwork> {
    let home = cairn_home();
    let standard_jobs = standard_jobs::materialize(&home)
        .with_context(|| format!("could not write cairn's standard jobs under {}", home.display()))?;
    let standard_schemas = standard_jobs::materialize_schemas(&home)
        .with_context(|| format!("could not write cairn's standard schemas under {}", home.display()))?;
    let folders = |var: &str| std::env::var(var).map(|v| split_folder_list(&v)).unwrap_or_default();
    Ok(Deepwork::new(Config {
        platform: platform.filter(|p| !p.is_empty()).unwrap_or_else(|| "claude".into()),
        standard_jobs,
        additional_job_folders: folders("DEEPWORK_ADDITIONAL_JOBS_FOLDERS"),
        standard_schemas,
        additional_schema_folders: folders("DEEPWORK_ADDITIONAL_SCHEMAS_FOLDERS"),
    }))
}

fn project_dir(path: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let dir = match path {
        Some(path) => path,
        None => std::env::current_dir().context("the current directory is not accessible")?,
    };
    if !dir.is_dir() {
        anyhow::bail!("Directory '{}' does not exist or is not a directory.", dir.display());
    }
    dir.canonicalize().with_context(|| format!("cannot resolve {}", dir.display()))
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let roots = match args.path {
        Some(path) => RootSource::Fixed(project_dir(Some(path))?),
        None => RootSource::ClientRoots { fallback: project_dir(None)? },
    };
    let server = DeepworkServer::new(service(args.platform)?, roots);
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    match args.transport {
        Transport::Stdio => cairn_mcp::serve_stdio(server).await?,
        Transport::Http => {
            let options = HttpOptions { addr, path: "/mcp".into(), extra_allowed_hosts: Vec::new() };
            cairn_mcp::serve_http(move || server.clone(), options).await?;
        }
        Transport::Sse => cairn_mcp::serve_legacy_sse(move || server.clone(), addr).await?,
    }
    Ok(())
}

fn get_stack(path: Option<PathBuf>) -> anyhow::Result<()> {
    let root = project_dir(path)?;
    let sessions = service(None)?.active_sessions(&root);
    let out = serde_json::json!({ "active_sessions": sessions });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}
