//! Running a command with a time limit: stdin closed, output captured, and on timeout the command is killed together
//! with everything it started (it runs in its own process group). Used for git, precompute commands and DeepSchema
//! verification commands.

use std::io;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How a command with a time limit ended.
#[derive(Debug)]
pub(crate) enum Finished {
    /// It exited (successfully or not) within the limit.
    Exited(Output),
    /// It ran past the limit and was killed.
    TimedOut,
    /// It could not be started or waited for.
    Failed(io::Error),
}

/// Runs `command` with stdin closed and stdout/stderr captured, killing it (and everything it started) after
/// `timeout`.
pub(crate) fn run_with_timeout(mut command: Command, timeout: Duration) -> Finished {
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let child = match command.spawn() {
        Ok(child) => child,
        Err(err) => return Finished::Failed(err),
    };
    let pid = child.id();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(child.wait_with_output());
    });
    match receiver.recv_timeout(timeout) {
        Ok(Ok(output)) => Finished::Exited(output),
        Ok(Err(err)) => Finished::Failed(err),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            kill_process_group(pid);
            Finished::TimedOut
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Finished::Failed(io::Error::other("the thread waiting for the command stopped unexpectedly"))
        }
    }
}

/// Kills the process group led by `pid` (the command and whatever it started).
fn kill_process_group(pid: u32) {
    #[cfg(unix)]
    {
        let _ = Command::new("sh")
            .arg("-c")
            .arg(format!("kill -KILL -{pid}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    #[cfg(not(unix))]
    let _ = pid;
}
