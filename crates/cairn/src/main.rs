//! The `cairn` binary: parse the command line, set up logging, run.

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    cairn::init_tracing();
    let cli = cairn::Cli::parse();
    match cairn::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("Error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
