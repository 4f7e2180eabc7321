//! The `roscoe` command tree, shared by `cairn roscoe …` and the `roscoe` entry name: `mcp` serves the Roscoe tools
//! over MCP on stdio; `run`, `runs …`, `workflows …`, `test` and `docs …` do the same from a terminal, through the
//! same facades (`Service`, `Runs`) on the same database, so a run started here shows live in the web UI and can be
//! answered there, and the other way round.
//!
//! The options every command takes (`--cwd` / `--global`, `--json`, `--quiet`, `--database-url`) are in
//! [`RoscoeArgs`]; [`context`] turns them into the facades and the scope, [`output`] into how things are printed,
//! and [`exit`] holds the exit codes. `run` ([`run_cmd`]) and the `runs` commands that continue a run share one loop
//! ([`drive`]: drive until done, paused or failed) and one progress display ([`progress`]).

mod context;
mod docs_cmd;
mod drive;
pub mod exit;
mod input;
mod output;
mod progress;
mod prompt;
mod run_cmd;
mod runs_cmd;
mod schedules_cmd;
mod script_lines;
mod script_output;
mod test_cmd;
mod workflows_cmd;

use std::path::PathBuf;

use cairn_roscoe::{RoscoeServer, Runs, Service, ToolGroups};
use clap::{Args, Parser, Subcommand};

use crate::home::cairn_home;

/// The `roscoe` program (the same as `cairn roscoe`).
#[derive(Debug, Parser)]
#[command(name = "roscoe", version, about = "Roscoe-compatible workflow server (cairn)", after_help = exit::EXIT_CODES)]
pub struct RoscoeCli {
    /// The options and the command.
    #[command(flatten)]
    pub args: RoscoeArgs,
}

/// The roscoe command with the options every roscoe command takes.
#[derive(Debug, Args)]
pub struct RoscoeArgs {
    /// The options every command takes.
    #[command(flatten)]
    pub options: GlobalOptions,
    /// What to do.
    #[command(subcommand)]
    pub command: RoscoeCommand,
}

impl RoscoeArgs {
    /// Whether this is a command at a terminal (everything but `mcp`, which serves a host): it logs warnings only
    /// unless `RUST_LOG` says otherwise.
    pub fn is_terminal_command(&self) -> bool {
        !matches!(self.command, RoscoeCommand::Mcp { .. })
    }
}

/// Options of every roscoe command (`roscoe runs list --json` and `roscoe --json runs list` are the same).
#[derive(Debug, Clone, Default, Args)]
pub struct GlobalOptions {
    /// The project: workflows of its repository's `.roscoe/workflows/` and its runs (default: the current
    /// directory's repository).
    #[arg(long, global = true, value_name = "DIR", conflicts_with = "global")]
    pub cwd: Option<PathBuf>,
    /// The global namespace instead of a project: workflows of `$CAIRN_HOME/workflows/` and global runs.
    #[arg(long, global = true)]
    pub global: bool,
    /// Print JSON on stdout (the same shapes the MCP tools return) and nothing else there.
    #[arg(long, global = true)]
    pub json: bool,
    /// Print less: no progress or notes on stderr, and lists print only their ids; errors and what a waiting run
    /// needs still show.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
    /// The database holding runs: sqlite://PATH or postgres://… (default: $CAIRN_HOME/cairn.db).
    #[arg(long, global = true, env = "CAIRN_DATABASE_URL", value_name = "URL")]
    pub database_url: Option<String>,
}

/// roscoe commands.
#[derive(Debug, Subcommand)]
pub enum RoscoeCommand {
    /// Serve the workflow and run tools over MCP on stdin/stdout (one server per host session).
    Mcp {
        /// Offer only these tool groups, comma-separated: runs, authoring, skills, docs, all (the default). For hosts
        /// that put every tool into every model request.
        #[arg(long, value_name = "GROUPS")]
        tools: Option<String>,
    },
    /// Start a workflow run and drive it until it completes, fails or waits for a person.
    #[command(after_help = exit::RUN_EXIT_CODES)]
    Run(run_cmd::RunArgs),
    /// Runs: list, show, watch, history, resume, cancel, retry.
    Runs {
        /// The runs command.
        #[command(subcommand)]
        command: runs_cmd::RunsCommand,
    },
    /// Schedules (a workflow's `schedule` and `every` triggers): list, pause, resume, approve.
    Schedules {
        /// The schedules command.
        #[command(subcommand)]
        command: schedules_cmd::SchedulesCommand,
    },
    /// Workflows: list, show, validate, lint, diagram (Mermaid).
    Workflows {
        /// The workflows command.
        #[command(subcommand)]
        command: workflows_cmd::WorkflowsCommand,
    },
    /// Run a workflow end to end on mocks (as the `test_workflow` tool does); the test run is deleted afterwards.
    Test(test_cmd::TestArgs),
    /// cairn's Roscoe documentation: search and show pages.
    Docs {
        /// The docs command.
        #[command(subcommand)]
        command: docs_cmd::DocsCommand,
    },
}

/// Runs a roscoe command.
pub async fn run(args: RoscoeArgs) -> anyhow::Result<()> {
    let options = args.options;
    let command = match args.command {
        RoscoeCommand::Mcp { tools } => return mcp(options, tools.as_deref()).await,
        RoscoeCommand::Docs { command } => return docs_cmd::run(&output::Output::new(&options), command),
        command => command,
    };
    let ctx = context::Ctx::open(&options).await?;
    let result = match command {
        RoscoeCommand::Run(run) => run_cmd::run(&ctx, run).await,
        RoscoeCommand::Runs { command } => runs_cmd::run(&ctx, command).await,
        RoscoeCommand::Schedules { command } => schedules_cmd::run(&ctx, command).await,
        RoscoeCommand::Workflows { command } => workflows_cmd::run(&ctx, command).await,
        RoscoeCommand::Test(test) => test_cmd::run(&ctx, test).await,
        RoscoeCommand::Mcp { .. } | RoscoeCommand::Docs { .. } => unreachable!("answered above"),
    };
    // On PostgreSQL, tells the other nodes of the changes not yet sent (the changes feed's outbox).
    ctx.runs.store().close().await;
    result
}

async fn mcp(options: GlobalOptions, tools: Option<&str>) -> anyhow::Result<()> {
    if options.cwd.is_some() || options.global || options.json || options.quiet {
        return Err(exit::Exit::usage(
            "`roscoe mcp` takes no --cwd, --global, --json or --quiet: each tool call names its own scope",
        )
        .into());
    }
    let groups = match tools.map(ToolGroups::parse) {
        None => ToolGroups::all(),
        Some(Ok(groups)) => groups,
        Some(Err(problem)) => return Err(exit::Exit::usage(format!("--tools: {problem}")).into()),
    };
    let home = cairn_home();
    let store = context::open_store(&home, options.database_url).await?;
    let service = Service::new(&home);
    let runs = Runs::new(store, service.clone());
    // The MCP entry point sweeps test runs orphaned by crashed processes (ROSCOE_SWEEP_TEST_RUNS=0 skips it).
    if std::env::var("ROSCOE_SWEEP_TEST_RUNS").map_or(true, |v| v != "0") {
        match runs.sweep_test_runs().await {
            Ok(0) => {}
            Ok(n) => tracing::info!("deleted {n} orphaned test run(s)"),
            Err(error) => tracing::warn!("could not sweep orphaned test runs: {error}"),
        }
    }
    // While it serves, its runs' timers fire on time and their notifications go out, as every `cairn serve` of the
    // database does.
    let timers = runs.keep_time();
    let notifications = runs.keep_notifying();
    let schedules = runs.keep_schedules(Vec::new());
    let server = cairn_mcp::Server::new(RoscoeServer::new(service, runs.clone()).offering(groups));
    let served = cairn_mcp::serve_stdio(server).await;
    timers.abort();
    notifications.abort();
    schedules.abort();
    runs.store().close().await;
    Ok(served?)
}
