//! The `cairn` binary: parse the command line, set up logging, run.

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = cairn::Cli::parse();
    if let Err(error) = cairn::logging::init(cli.log_format, cli.otlp_endpoint.as_deref().filter(|e| !e.is_empty())) {
        eprintln!("Error: {error}");
        return std::process::ExitCode::from(2);
    }
    match cairn::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("Error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
