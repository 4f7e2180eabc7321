//! Starting the real `cairn serve` for a test: on a port the server picks itself (`--addr 127.0.0.1:0`), read back
//! from its log line, so no two tests race for a port. The process is killed when the handle is dropped.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A running `cairn serve` and the base URL it listens on (`http://127.0.0.1:PORT`).
pub struct Served {
    /// The server process (killed on drop).
    _process: Child,
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub base: String,
    /// Every line the server has logged so far.
    log: Arc<Mutex<Vec<String>>>,
}

impl Served {
    /// Spawns `command` (already `cairn serve` with its environment) on a free port and waits until it listens.
    /// Also installs the TLS crypto provider the test HTTP clients need (they are built without a default one).
    pub async fn start(mut command: Command) -> Served {
        let _ = rustls::crypto::ring::default_provider().install_default();
        command
            .args(["--addr", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("spawn cairn serve");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr is piped")).lines();
        let mut seen = Vec::new();
        let base = loop {
            match lines.next_line().await.expect("read the server log") {
                Some(line) => {
                    // A text line ends with the address; a JSON line (`--log-format json`) closes its string.
                    if let Some((_, rest)) = line.split_once("listening on ") {
                        break rest.split(['"', ' ']).next().unwrap_or_default().to_owned();
                    }
                    seen.push(line);
                }
                None => panic!("cairn serve exited before listening:\n{}", seen.join("\n")),
            }
        };
        // Keep draining the log so the server never blocks on a full pipe, and keep it for `log`.
        let log = Arc::new(Mutex::new(seen));
        let kept = log.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                kept.lock().unwrap().push(line);
            }
        });
        Served { _process: child, base, log }
    }

    /// The full URL of `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// What the server has logged so far, one line each.
    #[allow(dead_code, reason = "only some test binaries read the log")]
    pub fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// Sends the server `signal` (`TERM`, `KILL`, …) with kill(1).
    #[allow(dead_code, reason = "only some test binaries signal their servers")]
    pub fn signal(&self, signal: &str) {
        let pid = self._process.id().expect("the server has not been waited for");
        let status = std::process::Command::new("kill").args([format!("-{signal}"), pid.to_string()]).status();
        assert!(status.is_ok_and(|s| s.success()), "kill -{signal} {pid}");
    }

    /// Waits for the server to exit; its exit status.
    #[allow(dead_code, reason = "only some test binaries stop their servers")]
    pub async fn exited(&mut self) -> std::process::ExitStatus {
        self._process.wait().await.expect("wait for cairn serve")
    }
}
