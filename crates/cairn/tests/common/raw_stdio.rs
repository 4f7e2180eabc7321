//! A raw JSON-RPC client of a stdio server: it writes any bytes as a line (malformed ones included) and reads what the
//! server writes back, checking that every line of stdout is a JSON-RPC message. After the `initialize` handshake,
//! [`RawStdio::exchange`] sends a line followed by a `ping` and returns what came back up to the ping's answer.

#![allow(dead_code, reason = "each test binary that includes this file uses part of it")]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// How long to wait for an answer before calling the server stuck (generous: the machine may be busy).
const PATIENCE: Duration = Duration::from_secs(60);

/// A stdio server process and the lines it wrote.
pub struct RawStdio {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Each line of stdout: a JSON-RPC message, or the line that is not one.
    answers: mpsc::UnboundedReceiver<Result<Value, String>>,
    stderr: Arc<Mutex<String>>,
    pings: u64,
}

impl RawStdio {
    /// Spawns `command` (a stdio MCP server) and goes through the `initialize` handshake.
    pub async fn start(command: Command) -> RawStdio {
        let (server, early) = RawStdio::start_after(command, &[]).await;
        assert_eq!(early, Vec::<Value>::new(), "nothing comes before the answer to initialize");
        server
    }

    /// Spawns `command`, sends it the lines `early`, then goes through the `initialize` handshake. Also returns what
    /// the server wrote before it answered `initialize`.
    pub async fn start_after(mut command: Command, early: &[&[u8]]) -> (RawStdio, Vec<Value>) {
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        let mut child = command.spawn().expect("spawn the server");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (sender, answers) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let message = serde_json::from_str::<Value>(&line).ok().filter(|m| m["jsonrpc"] == "2.0");
                if sender.send(message.ok_or(line)).is_err() {
                    return;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().expect("stderr is piped");
        let log = stderr.clone();
        tokio::spawn(async move {
            let mut buffer = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buffer).await {
                log.lock().unwrap().push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        let stdin = child.stdin.take();
        let mut server = RawStdio { child, stdin, answers, stderr, pings: 0 };
        let initialize = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
        for line in early {
            server.send(line).await;
        }
        server.send(initialize.to_string().as_bytes()).await;
        let mut before = Vec::new();
        let answer = loop {
            let Some(message) = server.next().await else {
                panic!("the server exited instead of answering initialize; its log:\n{}", server.log())
            };
            if message["id"] == "init" {
                break message;
            }
            before.push(message);
        };
        assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
        server.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
        (server, before)
    }

    /// Writes `bytes` and a newline.
    pub async fn send(&mut self, bytes: &[u8]) {
        self.write(bytes).await;
        self.write(b"\n").await;
    }

    /// Writes `bytes` as they are.
    pub async fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).await.expect("the server reads its stdin");
        stdin.flush().await.unwrap();
    }

    /// The next message the server writes, or None when it closed stdout. Panics after a long wait.
    pub async fn next(&mut self) -> Option<Value> {
        match tokio::time::timeout(PATIENCE, self.answers.recv()).await {
            Ok(Some(Ok(message))) => Some(message),
            Ok(Some(Err(line))) => panic!("stdout carries a line that is not JSON-RPC: {line}"),
            Ok(None) => None,
            Err(_) => panic!("the server wrote nothing for {} s; its log:\n{}", PATIENCE.as_secs(), self.log()),
        }
    }

    /// Sends `line`, then a `ping`: what the server wrote before the ping's answer (which shows it is still serving).
    pub async fn exchange(&mut self, line: &[u8]) -> Vec<Value> {
        self.send(line).await;
        self.until_pinged().await
    }

    /// Sends a `ping`: what the server wrote before its answer.
    pub async fn until_pinged(&mut self) -> Vec<Value> {
        self.pings += 1;
        let id = format!("sentinel ping #{}", self.pings);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string().as_bytes()).await;
        let mut before = Vec::new();
        loop {
            let Some(message) = self.next().await else {
                panic!("the server closed stdout instead of answering {id}; its log:\n{}", self.log())
            };
            if message["id"] == id.as_str() {
                assert_eq!(message["result"], json!({}), "{message}");
                return before;
            }
            before.push(message);
        }
    }

    /// The messages the server writes up to and including the answer to request `id` (as the server writes it: a
    /// string, or an integer).
    pub async fn until_answered(&mut self, id: &Value) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let Some(message) = self.next().await else {
                panic!("the server closed stdout before answering {id}; its log:\n{}", self.log())
            };
            let done = message["id"] == *id && message.get("method").is_none();
            seen.push(message);
            if done {
                return seen;
            }
        }
    }

    /// Closes stdin; waits for the server to exit and returns whether it exited successfully.
    pub async fn close(&mut self) -> bool {
        drop(self.stdin.take());
        let status = tokio::time::timeout(PATIENCE, self.child.wait()).await.expect("the server exits").unwrap();
        status.success()
    }

    /// What the server logged on stderr so far.
    pub fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}
