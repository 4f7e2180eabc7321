//! Running a script node's process (§7.1): its own process group, stdin closed, stdout and stderr captured (1 MiB
//! each), the `ROSCOE_*` environment with a private context file, a time limit (SIGTERM to the group, SIGKILL 5 s
//! later) and retries with backoff. Killing a group on cancel goes through [`kill_group`] (or [`kill_later`]: SIGTERM,
//! then SIGKILL after the grace), which works from any process on the machine.
//!
//! On Linux the process started is a [`supervisor`](super::supervisor) that runs the script as its child: it stops
//! the script's whole tree (processes that left the group with `setsid` included) on timeout, cancel, the script's
//! end and the server's death. Elsewhere the script is started directly and only its process group is signalled.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;

use super::context_file::{self, ContextFile};
use crate::engine::{Program, ScriptJob, ScriptResult};

/// Output kept per stream.
const OUTPUT_CAP: usize = 1024 * 1024;

/// How long the server waits after SIGTERM before it SIGKILLs the group: the supervisor's own grace and time to
/// kill and reap the tree on Linux, the script's grace elsewhere.
#[cfg(target_os = "linux")]
pub(crate) const GRACE: Duration = super::supervisor::SERVER_GRACE;
#[cfg(not(target_os = "linux"))]
pub(crate) const GRACE: Duration = Duration::from_secs(5);

/// Sends SIGTERM to a script's group if the attempt is abandoned (its caller stopped waiting, e.g. `test_workflow`'s
/// time limit) before the script ended.
struct Abandoned {
    pid: u32,
    ended: bool,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        if !self.ended {
            kill_group(self.pid, false);
        }
    }
}

/// Runs one attempt of `job` in `cwd`, calling `started(pid)` once the process exists. The context file is written
/// under `home`.
pub(crate) async fn run_once(job: &ScriptJob, cwd: &Path, home: &Path, started: impl FnOnce(u32)) -> ScriptResult {
    let context = match ContextFile::create(home, &job.node_run_id, &job.context) {
        Ok(file) => file,
        Err(e) => {
            let error = format!("its context file could not be written in {}: {e}", home.join("run").display());
            return ScriptResult { spawn_error: Some(error), attempts: 1, ..ScriptResult::default() };
        }
    };
    let mut command = match &job.program {
        Program::Shell(line) => {
            let mut c = Command::new("sh");
            c.arg("-c").arg(line);
            c
        }
        Program::Exec { program, args } => {
            let mut c = Command::new(program);
            c.args(args);
            c
        }
    };
    command
        .current_dir(cwd)
        .env("ROSCOE_RUN_ID", &job.run_id)
        .env("ROSCOE_NODE_ID", &job.node_id)
        .env("ROSCOE_PROJECT_ROOT", job.project_root.as_deref().unwrap_or(""))
        .env("ROSCOE_WORKFLOW_DIR", &job.workflow_dir)
        .env(context_file::VARIABLE, context.path())
        .envs(job.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    #[cfg(unix)]
    command.process_group(0);
    #[cfg(target_os = "linux")]
    super::supervisor::install(&mut command);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return ScriptResult { spawn_error: Some(e.to_string()), attempts: 1, ..ScriptResult::default() },
    };
    let pid = child.id().unwrap_or(0);
    let mut abandoned = Abandoned { pid, ended: false };
    started(pid);
    let stdout = child.stdout.take().map(|s| tokio::spawn(read_capped(s)));
    let stderr = child.stderr.take().map(|s| tokio::spawn(read_capped(s)));
    let limit = Duration::from_millis(job.timeout_ms);
    let (status, timed_out) = match tokio::time::timeout(limit, child.wait()).await {
        Ok(status) => (status.ok(), false),
        Err(_) => {
            kill_group(pid, false);
            let status = match tokio::time::timeout(GRACE, child.wait()).await {
                Ok(status) => status.ok(),
                Err(_) => {
                    kill_group(pid, true);
                    child.wait().await.ok()
                }
            };
            (status, true)
        }
    };
    abandoned.ended = true;
    // The group may outlive its leader (a backgrounded grandchild keeps the pipes open): end it.
    kill_group(pid, true);
    let (stdout, out_cut) = join(stdout).await;
    let (stderr, err_cut) = join(stderr).await;
    drop(context);
    let exit_code = status.and_then(|s| s.code());
    ScriptResult {
        success: !timed_out && exit_code.is_some_and(|c| job.success_codes.contains(&c)),
        exit_code,
        stdout,
        stderr,
        timed_out,
        spawn_error: None,
        truncated: out_cut || err_cut,
        attempts: 1,
    }
}

async fn join(task: Option<tokio::task::JoinHandle<(String, bool)>>) -> (String, bool) {
    match task {
        Some(task) => match tokio::time::timeout(GRACE, task).await {
            Ok(Ok(read)) => read,
            _ => (String::new(), false),
        },
        None => (String::new(), false),
    }
}

async fn read_capped(mut stream: impl tokio::io::AsyncRead + Unpin) -> (String, bool) {
    let mut kept = Vec::new();
    let mut buffer = [0u8; 8192];
    let mut cut = false;
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = OUTPUT_CAP.saturating_sub(kept.len());
                if n > room {
                    cut = true;
                }
                kept.extend_from_slice(&buffer[..n.min(room)]);
            }
        }
    }
    (String::from_utf8_lossy(&kept).into_owned(), cut)
}

/// Sends SIGTERM (or SIGKILL) to the process group `pid`.
pub(crate) fn kill_group(pid: u32, hard: bool) {
    if pid == 0 {
        return;
    }
    let signal = if hard { "-KILL" } else { "-TERM" };
    let _ = std::process::Command::new("kill")
        .args([signal, "--", &format!("-{pid}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// SIGTERM to the process group of a script of `run_id` now (on Linux its supervisor then stops the whole tree), SIGKILL
/// to the group once the grace is over — if that script runs on this machine; one on another node's machine is stopped
/// by its own node when its lease renewal finds the run over.
pub(crate) fn kill_later(pid: u32, run_id: &str) {
    if !is_script_of(pid, run_id) {
        return;
    }
    kill_group(pid, false);
    tokio::spawn(async move {
        tokio::time::sleep(GRACE).await;
        kill_group(pid, true);
    });
}

/// Whether process group leader `pid` on this machine is a script of run `run_id` (it, or on Linux the script its
/// supervisor runs, carries `ROSCOE_RUN_ID`), so that a cancel never signals an unrelated process — the script may run
/// on another node's machine, where its own node stops it. `true` where `/proc` cannot tell.
pub(crate) fn is_script_of(pid: u32, run_id: &str) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    let wanted = format!("ROSCOE_RUN_ID={run_id}");
    if carries(pid, &wanted) {
        return true;
    }
    // A supervisor is a copy of its server (it never executes anything): its script is its child.
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    children.split_whitespace().filter_map(|c| c.parse().ok()).any(|child| carries(child, &wanted))
}

/// Whether process `pid` has the environment entry `wanted`.
fn carries(pid: u32, wanted: &str) -> bool {
    // A process caught in the middle of exec shows an empty environment for a moment: look again.
    for _ in 0..50 {
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else { return false };
        if !environ.is_empty() {
            return environ.split(|b| *b == 0).any(|entry| entry == wanted.as_bytes());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

/// Whether process `pid` exists on this machine (`None` when that cannot be told).
pub(crate) fn process_alive(pid: u32) -> Option<bool> {
    if Path::new("/proc/self").exists() {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
        // A zombie (state Z) has exited.
        return Some(stat.is_some_and(|s| !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z')));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_signals_only_processes_that_are_scripts_of_the_run() {
        if !Path::new("/proc/self").exists() {
            return;
        }
        let spawn = |env: Option<&str>| {
            let mut command = std::process::Command::new("sleep");
            command.arg("30").env_remove("ROSCOE_RUN_ID");
            if let Some(run_id) = env {
                command.env("ROSCOE_RUN_ID", run_id);
            }
            command.spawn().expect("spawn sleep")
        };
        let (mut script, mut stranger) = (spawn(Some("run_a")), spawn(None));
        assert!(is_script_of(script.id(), "run_a"));
        assert!(!is_script_of(script.id(), "run_b"), "a script of another run");
        assert!(!is_script_of(stranger.id(), "run_a"), "an unrelated process (a pid from another machine, say)");
        assert!(!is_script_of(u32::MAX - 1, "run_a"), "no such process");
        for child in [&mut script, &mut stranger] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
