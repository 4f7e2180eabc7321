//! The `deepwork` entry name: the same program as `cairn deepwork`, so `deepwork serve --path .` works.

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    if let Err(error) = cairn::init_tracing() {
        eprintln!("Error: {error}");
        return std::process::ExitCode::from(2);
    }
    let cli = cairn::deepwork_cli::DeepworkCli::parse();
    match cairn::deepwork_cli::run(cli.command).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("Error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
