//! The `cairn` binary: parse the command line, set up logging, run.

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = cairn::Cli::parse();
    cairn::logging::init(cli.log_format);
    match cairn::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("Error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
