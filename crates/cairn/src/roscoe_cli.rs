//! The `roscoe` command tree, shared by `cairn roscoe …` and the `roscoe` entry name: `mcp` serves the Roscoe
//! authoring tools over MCP on stdio, with the global source and `roscoe.yaml` under the cairn home.

use cairn_roscoe::{RoscoeServer, Service};
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
    /// Serve the workflow tools over MCP on stdin/stdout (one server per host session).
    Mcp,
}

/// Runs a roscoe command.
pub async fn run(command: RoscoeCommand) -> anyhow::Result<()> {
    match command {
        RoscoeCommand::Mcp => {
            let server = RoscoeServer::new(Service::new(cairn_home()));
            cairn_mcp::serve_stdio(server).await?;
            Ok(())
        }
    }
}
