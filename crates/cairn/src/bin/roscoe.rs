//! The `roscoe` entry name: a shim that becomes the `cairn` program beside it, started as `roscoe` (the name picks
//! the command set, `cairn::entry`), so `roscoe mcp` and `roscoe run` are `cairn roscoe …`. It is its own tiny
//! binary so `cargo install --path crates/cairn` installs the name, without a second whole link of the program.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let cairn = match std::env::current_exe() {
        Ok(exe) => exe.with_file_name(format!("cairn{}", std::env::consts::EXE_SUFFIX)),
        Err(error) => return failed(None, &error),
    };
    become_roscoe(cairn, std::env::args_os().skip(1).collect())
}

/// Replaces this process with `cairn` started as `roscoe` (same process id, signals and exit code).
#[cfg(unix)]
fn become_roscoe(cairn: PathBuf, args: Vec<OsString>) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let error = Command::new(&cairn).arg0("roscoe").args(args).exec();
    failed(Some(cairn), &error)
}

/// Runs `cairn roscoe …` and ends with its exit code (no `exec` here).
#[cfg(not(unix))]
fn become_roscoe(cairn: PathBuf, args: Vec<OsString>) -> ExitCode {
    match Command::new(&cairn).arg("roscoe").args(args).status() {
        Ok(status) => ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8),
        Err(error) => failed(Some(cairn), &error),
    }
}

/// `roscoe` could not start `cairn`: say which file it looked for and how to get it.
fn failed(cairn: Option<PathBuf>, error: &std::io::Error) -> ExitCode {
    match cairn {
        Some(cairn) => eprintln!(
            "Error: roscoe runs the cairn program beside it, {}, which could not start: {error}. Install both \
             together (cargo install --path crates/cairn) or call `cairn roscoe …`.",
            cairn.display()
        ),
        None => eprintln!("Error: roscoe could not find its own file to start cairn beside it: {error}"),
    }
    ExitCode::from(127)
}
