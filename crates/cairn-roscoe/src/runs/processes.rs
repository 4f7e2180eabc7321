//! Signalling and watching script processes by pid, from any process on the machine: SIGTERM or SIGKILL to a
//! script's process group, the two in turn after the grace ([`kill_later`]), only for processes that really are scripts
//! of the run ([`is_script_of`], which reads `/proc`), and whether a process still lives ([`process_alive`]).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// How long the server waits after SIGTERM before it SIGKILLs the group: the supervisor's own grace and time to
/// kill and reap the tree on Linux, the script's grace elsewhere.
#[cfg(target_os = "linux")]
pub(crate) const GRACE: Duration = super::supervisor::SERVER_GRACE;
#[cfg(not(target_os = "linux"))]
pub(crate) const GRACE: Duration = Duration::from_secs(5);

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
