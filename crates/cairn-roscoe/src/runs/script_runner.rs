//! Running a script node's process (§7.1): its own process group, stdin closed, stdout and stderr captured (1 MiB
//! each, and passed on as they come to the attempt's [`LiveScript`]), the `ROSCOE_*` environment with a private
//! context file, a time limit (SIGTERM to the group, SIGKILL 5 s later) and retries with backoff. Killing a group on
//! cancel goes through `processes.rs`, which works from any process on the machine.
//!
//! On Linux the process started is a [`supervisor`](super::supervisor) that runs the script as its child: it stops
//! the script's whole tree (processes that left the group with `setsid` included) on timeout, cancel, the script's
//! end and the server's death. Elsewhere the script is started directly and only its process group is signalled.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;

use super::context_file::{self, ContextFile};
use super::live_output::{LiveScript, Stream};
use super::processes::{GRACE, kill_group};
use crate::engine::{Program, ScriptJob, ScriptResult};

/// Output kept per stream.
const OUTPUT_CAP: usize = 1024 * 1024;

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

/// Runs one attempt of `job` in `cwd`, calling `started(pid)` once the process exists and passing what it prints to
/// `live` as it comes. The context file is written under `home`.
pub(crate) async fn run_once(
    job: &ScriptJob,
    cwd: &Path,
    home: &Path,
    live: &Arc<LiveScript>,
    started: impl FnOnce(u32),
) -> ScriptResult {
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
    let stdout = child.stdout.take().map(|s| tokio::spawn(read_capped(s, live.clone(), Stream::Stdout)));
    let stderr = child.stderr.take().map(|s| tokio::spawn(read_capped(s, live.clone(), Stream::Stderr)));
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

/// Reads `stream` to its end: its first [`OUTPUT_CAP`] bytes, whether it had more, and everything passed to `live`.
async fn read_capped(
    mut stream: impl tokio::io::AsyncRead + Unpin,
    live: Arc<LiveScript>,
    name: Stream,
) -> (String, bool) {
    let mut kept = Vec::new();
    let mut buffer = [0u8; 8192];
    let mut cut = false;
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                live.feed(name, &buffer[..n]);
                let room = OUTPUT_CAP.saturating_sub(kept.len());
                if n > room {
                    cut = true;
                }
                kept.extend_from_slice(&buffer[..n.min(room)]);
            }
        }
    }
    live.end(name);
    (String::from_utf8_lossy(&kept).into_owned(), cut)
}
