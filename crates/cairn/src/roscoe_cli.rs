//! The `roscoe` command tree, shared by `cairn roscoe …` and the `roscoe` entry name: `mcp` serves the Roscoe tools
//! over MCP on stdio, with the global source and `roscoe.yaml` under the cairn home and runs in the database.

use cairn_roscoe::{RoscoeServer, Runs, Service};
use cairn_store::Store;
use clap::{Parser, Subcommand};

use crate::home::cairn_home;

/// The `roscoe` program (the same as `cairn roscoe`).
#[derive(Debug, Parser)]
#[command(name = "roscoe", version, about = "Roscoe-compatible workflow server (cairn)")]
pub struct RoscoeCli {
    /// What to do.
    #[command(subcommand)]
    pub command: RoscoeCommand,
}

/// roscoe commands.
#[derive(Debug, Subcommand)]
pub enum RoscoeCommand {
    /// Serve the workflow and run tools over MCP on stdin/stdout (one server per host session).
    Mcp {
        /// The database holding runs: sqlite://PATH or postgres://… (default: $CAIRN_HOME/cairn.db).
        #[arg(long, env = "CAIRN_DATABASE_URL", value_name = "URL")]
        database_url: Option<String>,
    },
}

/// Runs a roscoe command.
pub async fn run(command: RoscoeCommand) -> anyhow::Result<()> {
    match command {
        RoscoeCommand::Mcp { database_url } => {
            let home = cairn_home();
            let url = database_url.unwrap_or_else(|| Store::default_url(&home));
            let store = Store::open(&url).await?;
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
            cairn_mcp::serve_stdio(RoscoeServer::new(service, runs)).await?;
            Ok(())
        }
    }
}
