//! The `roscoe` entry name: the same program as `cairn roscoe`, so `roscoe mcp` works.

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    if let Err(error) = cairn::init_tracing() {
        eprintln!("Error: {error}");
        return std::process::ExitCode::from(2);
    }
    let cli = cairn::roscoe_cli::RoscoeCli::parse();
    match cairn::roscoe_cli::run(cli.command).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("Error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
