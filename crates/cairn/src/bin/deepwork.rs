//! The `deepwork` entry name: the same program as `cairn deepwork`, so `deepwork serve --path .` works.

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    cairn::init_tracing();
    let cli = cairn::deepwork_cli::DeepworkCli::parse();
    match cairn::deepwork_cli::run(cli.command).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("Error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
