//! The program's entry, one for every name it is installed under: the command set is picked from the name it was
//! started as (`argv[0]`'s file name, without `.exe`) — `deepwork …`, `roscoe …`, or else `cairn …` — so a
//! symlink or hard link named `roscoe` or `deepwork` to the `cairn` binary works like the separately built ones.
//! Errors are printed as `Error: …` on stderr; the exit code is the one a command ended with
//! ([`roscoe_cli::exit::Exit`]), 1 for other errors, 2 for usage errors (clap's own included).

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;

use crate::logging::{COMMAND_LOGS, SERVER_LOGS};
use crate::roscoe_cli::exit::Exit;
use crate::{Cli, deepwork_cli, roscoe_cli};

/// The command sets the program can be started as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    /// `cairn …`.
    Cairn,
    /// `deepwork …` (`cairn deepwork …`).
    Deepwork,
    /// `roscoe …` (`cairn roscoe …`).
    Roscoe,
}

impl Program {
    /// The command set of the name `argv0` (a path or a bare name).
    pub fn of(argv0: &OsString) -> Program {
        let name = Path::new(argv0).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        match name.strip_suffix(".exe").unwrap_or(&name) {
            "deepwork" => Program::Deepwork,
            "roscoe" => Program::Roscoe,
            _ => Program::Cairn,
        }
    }
}

/// The `cairn` binary's whole body: [`main`] on a multi-threaded tokio runtime. The runtime polls the program's
/// futures here, so their code is compiled once, with this crate, and not again in each binary (a release build of
/// a binary that polled them itself spent most of a minute compiling the whole program a second time).
pub fn run() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build();
    runtime.expect("a tokio runtime starts").block_on(main())
}

/// The `deepwork` binary's body: [`deepwork_main`] on one thread (a deepwork server has one client; file work runs
/// on tokio's blocking threads, so a call's hand-offs stay on one core and the idle program holds no worker threads).
pub fn run_deepwork() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
    runtime.expect("a tokio runtime starts").block_on(deepwork_main())
}

/// Parses this process's command line as the program its name picks, runs it and gives its exit code.
pub async fn main() -> ExitCode {
    crate::closed_pipe::end_quietly_when_the_reader_goes();
    let args: Vec<OsString> = std::env::args_os().collect();
    let program = args.first().map_or(Program::Cairn, Program::of);
    let outcome = match program {
        Program::Cairn => {
            let cli = Cli::parse_from(args);
            let default = if cli.is_terminal_command() { COMMAND_LOGS } else { SERVER_LOGS };
            if let Err(error) = crate::logging::init(cli.log_format, cli.otlp_endpoint.as_deref().filter(|e| !e.is_empty()), default) {
                return logging_failed(&error);
            }
            crate::run(cli).await
        }
        Program::Deepwork => {
            let cli = deepwork_cli::DeepworkCli::parse_from(args);
            if let Err(error) = crate::init_tracing(SERVER_LOGS) {
                return logging_failed(&error);
            }
            deepwork_cli::run(cli.command).await
        }
        Program::Roscoe => {
            let cli = roscoe_cli::RoscoeCli::parse_from(args);
            let default = if cli.args.is_terminal_command() { COMMAND_LOGS } else { SERVER_LOGS };
            if let Err(error) = crate::init_tracing(default) {
                return logging_failed(&error);
            }
            roscoe_cli::run(cli.args).await
        }
    };
    exit_code(outcome)
}

/// `deepwork …` alone, whatever the name: the `deepwork` binary's entry. It refers to nothing of the other command
/// sets, so the linker leaves them out and `deepwork serve` maps far less code (its peak memory is mostly the
/// program's own pages; docs/benchmarks.md).
pub async fn deepwork_main() -> ExitCode {
    crate::closed_pipe::end_quietly_when_the_reader_goes();
    let cli = deepwork_cli::DeepworkCli::parse();
    if let Err(error) = crate::init_tracing(SERVER_LOGS) {
        return logging_failed(&error);
    }
    exit_code(deepwork_cli::run(cli.command).await)
}

/// Logging could not start (a bad `--log-format`, `CAIRN_LOG_FORMAT` or OTLP endpoint): a usage error.
fn logging_failed(error: &str) -> ExitCode {
    eprintln!("Error: {error}");
    ExitCode::from(2)
}

/// The exit code of a command's outcome, its error printed as `Error: …`.
fn exit_code(outcome: anyhow::Result<()>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => match error.downcast_ref::<Exit>() {
            Some(exit) => {
                if let Some(message) = &exit.message {
                    eprintln!("Error: {message}");
                }
                ExitCode::from(exit.code)
            }
            None => {
                eprintln!("Error: {error:#}");
                ExitCode::FAILURE
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_started_as_picks_the_command_set() {
        for (argv0, program) in [
            ("roscoe", Program::Roscoe),
            ("/usr/local/bin/roscoe", Program::Roscoe),
            ("roscoe.exe", Program::Roscoe),
            ("./deepwork", Program::Deepwork),
            ("cairn", Program::Cairn),
            ("/opt/x/roscoe-old", Program::Cairn),
            ("", Program::Cairn),
        ] {
            assert_eq!(Program::of(&OsString::from(argv0)), program, "{argv0}");
        }
    }
}
