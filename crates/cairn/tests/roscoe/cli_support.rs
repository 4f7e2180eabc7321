//! Helpers for the command-line tests: running `roscoe …` (the real binary) in a project with this test's home and
//! database, and a pseudo-terminal to run it on when a test needs standard input and standard error to be a
//! terminal.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::Env;

/// Two workflow steps' worth of work, then a person's decision: script → condition → human → script. The README
/// shows it (`the_readme_shows_the_release_workflow_the_tests_run`).
pub const RELEASE: &str = "name: release\ndescription: Builds, checks, asks, ships\ninitial: build\nnodes:\n  build:\n    type: script\n    config: { command: \"echo '{\\\"tests\\\": 3}'\" }\n    transitions: { success: check, failure: $fail }\n  check:\n    type: condition\n    config: { expression: \"build.json.tests > 2\" }\n    transitions: { \"true\": review, \"false\": $fail }\n  review:\n    type: human\n    config: { prompt: \"Ship the build?\", labels: { approve: \"Ship it\", reject: \"Hold it\" } }\n    transitions: { approve: ship, reject: $fail }\n  ship:\n    type: script\n    config: { command: \"echo shipped\" }\n    transitions: { success: $end, failure: $fail }\n";

/// What a finished command did.
#[derive(Debug)]
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// Runs `command` to its end (within two minutes).
    pub async fn of(mut command: tokio::process::Command) -> Ran {
        let output = tokio::time::timeout(Duration::from_secs(120), command.output())
            .await
            .expect("roscoe ended within two minutes")
            .expect("roscoe ran");
        Ran {
            code: output.status.code().expect("an exit code"),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Stdout as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:?}"))
    }
}

impl Env {
    /// `roscoe args…` run in `dir` with no standard input, to its end (within two minutes).
    pub async fn roscoe(&self, dir: &Path, args: &[&str]) -> Ran {
        let mut command = self.cli(env!("CARGO_BIN_EXE_roscoe"), args);
        command.current_dir(dir).stdin(Stdio::null()).env_remove("NO_COLOR");
        Ran::of(command).await
    }
}

/// A command running with standard input and standard error on a pseudo-terminal, standard output on a pipe.
pub struct OnTerminal {
    child: tokio::process::Child,
    master: std::fs::File,
    screen: Arc<Mutex<String>>,
    reader: std::thread::JoinHandle<()>,
}

impl OnTerminal {
    /// Starts `command` (already given its arguments, environment and directory) on a new pseudo-terminal.
    pub fn start(mut command: tokio::process::Command) -> OnTerminal {
        let (mut master_fd, mut slave_fd) = (0, 0);
        // SAFETY: openpty writes two new descriptors, which are owned from here on.
        let opened = unsafe {
            libc::openpty(&mut master_fd, &mut slave_fd, std::ptr::null_mut(), std::ptr::null(), std::ptr::null())
        };
        assert_eq!(opened, 0, "openpty");
        // SAFETY: both descriptors were just opened and nothing else owns them.
        let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master_fd), OwnedFd::from_raw_fd(slave_fd)) };
        command.stdin(Stdio::from(slave.try_clone().unwrap())).stderr(Stdio::from(slave)).stdout(Stdio::piped());
        let child = command.spawn().expect("start the command on the terminal");
        // The command's copies of the terminal are its own now (ours went with `command`'s), so reading the master
        // ends when the command does.
        drop(command);
        let master = std::fs::File::from(master);
        let screen = Arc::new(Mutex::new(String::new()));
        let (mut reader, shown) = (master.try_clone().unwrap(), screen.clone());
        let reader = std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                shown.lock().unwrap().push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        OnTerminal { child, master, screen, reader }
    }

    /// Everything the terminal has shown so far.
    pub fn screen(&self) -> String {
        self.screen.lock().unwrap().clone()
    }

    /// Waits (up to a minute) until the terminal shows `text`.
    pub async fn wait_for(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.screen().contains(text) {
            assert!(Instant::now() < deadline, "the terminal never showed {text:?}; it shows:\n{}", self.screen());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Sends the command SIGINT, as Ctrl-C at its terminal would.
    pub fn interrupt(&self) {
        // SAFETY: a signal to the command this test started.
        unsafe { libc::kill(self.child.id().expect("still running") as i32, libc::SIGINT) };
    }

    /// Types `line` and Enter.
    pub fn type_line(&mut self, line: &str) {
        self.master.write_all(format!("{line}\n").as_bytes()).unwrap();
    }

    /// Waits (up to two minutes) for the command to end: its exit code and standard output.
    pub async fn finish(mut self) -> (i32, String, String) {
        let mut stdout = String::new();
        let mut pipe = self.child.stdout.take().unwrap();
        let read = async {
            tokio::io::AsyncReadExt::read_to_string(&mut pipe, &mut stdout).await.unwrap();
            self.child.wait().await.unwrap()
        };
        let status = tokio::time::timeout(Duration::from_secs(120), read).await.expect("the command ended");
        // Once the command (the last holder of the terminal) is gone, reading the master ends: all it showed is in.
        let reader = self.reader;
        tokio::task::spawn_blocking(move || reader.join()).await.unwrap().unwrap();
        let screen = self.screen.lock().unwrap().clone();
        (status.code().expect("an exit code"), stdout, screen)
    }
}

#[test]
fn the_readme_shows_the_release_workflow_the_tests_run() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let (_, after) = readme.split_once("<!-- file: .roscoe/workflows/release.yaml -->\n```yaml\n").unwrap();
    let (shown, _) = after.split_once("```").unwrap();
    assert_eq!(shown, RELEASE, "the README's release.yaml is the workflow `roscoe run release` is tested with");
}
