//! The cairn program: its command line and the wiring from commands to surfaces.
//!
//! `cairn deepwork …` and the `deepwork` entry name share one command tree ([`deepwork_cli::DeepworkCommand`]), so
//! `deepwork serve --path .` and `cairn deepwork serve --path .` are the same thing. Likewise `cairn roscoe …` and the
//! `roscoe` entry name share [`roscoe_cli::RoscoeArgs`] (`roscoe mcp`, `roscoe run`, `roscoe runs …`). The name the
//! program is started as picks the tree ([`entry`]). `cairn setup <host>` and `deepwork setup <host>` are one command
//! ([`setup`]); `cairn completions` and `cairn man` are generated from these definitions.

mod closed_pipe;
pub mod completions;
pub mod db_cli;
pub mod deepwork_cli;
pub mod entry;
pub mod home;
pub mod logging;
pub mod man_pages;
mod mcp_sessions;
pub mod roscoe_cli;
pub mod serve_cli;
pub mod setup;
pub mod span;
pub mod transfer_cli;
mod work_calls;
pub mod work_cli;
pub mod work_items_cli;
pub mod work_options;
mod work_remote;

use clap::{Parser, Subcommand};

/// cairn: MCP servers for AI agents (DeepWork-compatible workflows, Roscoe-compatible workflow authoring).
#[derive(Debug, Parser)]
#[command(name = "cairn", version, about)]
pub struct Cli {
    /// How to write log lines (on stderr): text, or json (one object a line). `RUST_LOG` filters them.
    #[arg(long, global = true, value_enum, env = "CAIRN_LOG_FORMAT", default_value = "text", value_name = "FORMAT")]
    pub log_format: logging::LogFormat,
    /// Also send spans (HTTP requests, tool calls) as OpenTelemetry traces to this OTLP/HTTP collector,
    /// `http://HOST:4318` (off when unset).
    #[arg(long, global = true, env = "OTEL_EXPORTER_OTLP_ENDPOINT", value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print a shell completion script (bash, zsh, fish or powershell) for cairn, roscoe or deepwork.
    Completions(completions::CompletionsArgs),
    /// The database: `db migrate` applies pending migrations (safe to run from several nodes at once).
    Db(db_cli::DbArgs),
    /// The DeepWork-compatible workflow server and its tools (same commands as `deepwork`).
    Deepwork {
        /// The deepwork command.
        #[command(subcommand)]
        command: deepwork_cli::DeepworkCommand,
    },
    /// Write man pages for cairn, roscoe and deepwork and each of their commands into a folder.
    Man(man_pages::ManArgs),
    /// Write the global workflows and every run as JSON lines (to move them to another machine or database).
    Export(transfer_cli::ExportArgs),
    /// Read what `cairn export` wrote into this home and database (all rows or none).
    Import(transfer_cli::ImportArgs),
    /// The HTTP server: MCP endpoints (`/roscoe/mcp`, `/mcp`, `/deepwork/mcp` with `--project`), the REST API under
    /// `/api`, the web UI, `/healthz` and `/metrics`.
    Serve(serve_cli::ServeArgs),
    /// Write cairn's MCP servers into a host's settings: claude (the plugin), codex, gemini or cursor.
    Setup(setup::SetupArgs),
    /// The Roscoe-compatible workflow server and its command line (same commands as `roscoe`).
    #[command(after_help = roscoe_cli::exit::EXIT_CODES)]
    Roscoe(roscoe_cli::RoscoeArgs),
    /// The work surface: work items and decisions over MCP on stdio (`work mcp`), accounts and tokens, and work
    /// items and evidence from the command line (`work items …`, `work evidence …`).
    Work(work_cli::WorkArgs),
}

impl Cli {
    /// Whether this is a command at a terminal whose own output is its display (`cairn roscoe run`, `cairn roscoe
    /// runs …`): it logs warnings only unless `RUST_LOG` says otherwise.
    pub fn is_terminal_command(&self) -> bool {
        matches!(&self.command, Command::Roscoe(args) if args.is_terminal_command())
    }
}

/// Runs a parsed `cairn` command line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Db(args) => db_cli::run(args).await,
        Command::Deepwork { command } => deepwork_cli::run(command).await,
        Command::Completions(args) => Ok(completions::run(args)?),
        Command::Man(args) => man_pages::run(args),
        Command::Roscoe(args) => roscoe_cli::run(args).await,
        Command::Export(args) => transfer_cli::export(args).await,
        Command::Import(args) => transfer_cli::import(args).await,
        Command::Serve(args) => serve_cli::run(args).await,
        Command::Setup(args) => setup::run(args),
        Command::Work(args) => work_cli::run(args).await,
    }
}

/// Sets up logging from `CAIRN_LOG_FORMAT`, `RUST_LOG` (else `default`: [`logging::SERVER_LOGS`] or
/// [`logging::COMMAND_LOGS`]) and `OTEL_EXPORTER_OTLP_ENDPOINT` ([`logging`]), for the `deepwork` and `roscoe` entry
/// names.
pub fn init_tracing(default: &str) -> Result<(), String> {
    let (format, warning) = logging::LogFormat::from_env();
    logging::init(format, logging::otlp_from_env().as_deref(), default)?;
    if let Some(warning) = warning {
        tracing::warn!("{warning}");
    }
    Ok(())
}
