//! Headless Claude Code as a provider — the subscription path: `claude -p --output-format json --model M` with the
//! prompt on stdin (no argument-length limit), in the run's project root, paid by the login of the user the server
//! runs as. Its JSON gives `result` (the answer), `total_cost_usd` (kept as the call's cost), `usage` and
//! `session_id`; `is_error` makes the call fail. `maxBudgetUsd` becomes `--max-budget-usd`, and `args` are added as
//! given. The process runs in its own process group, which is killed (SIGKILL) when the call is abandoned — cancel,
//! time limit, or the server stopping the run.

use std::process::Stdio;

use async_trait::async_trait;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Failure, Provider, Reply, Request, Usage};
use crate::engine::Billing;
use crate::runs::settings::ProviderSettings;

/// Output kept from the CLI.
const OUTPUT_CAP: u64 = 16 * 1024 * 1024;

/// A configured `claude` command.
pub(crate) struct ClaudeCli {
    command: String,
    args: Vec<String>,
    max_budget_usd: Option<f64>,
}

impl ClaudeCli {
    /// The provider of `settings`.
    pub(crate) fn new(settings: &ProviderSettings) -> ClaudeCli {
        ClaudeCli {
            command: settings.command.clone().unwrap_or_else(|| "claude".to_owned()),
            args: settings.args.clone(),
            max_budget_usd: settings.max_budget_usd,
        }
    }
}

/// Kills a process group when dropped before the process was waited for.
struct Group {
    pid: Option<u32>,
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pid) = self.pid.filter(|pid| *pid > 0) {
            // SAFETY: killpg only sends a signal; the group is the CLI's own (process_group(0) at spawn).
            unsafe {
                libc::killpg(pid as libc::pid_t, libc::SIGKILL);
            }
        }
    }
}

#[async_trait]
impl Provider for ClaudeCli {
    fn billing(&self) -> Billing {
        Billing::Subscription
    }

    fn max_output_tokens(&self) -> Option<u32> {
        None
    }

    fn max_call_usd(&self) -> Option<f64> {
        self.max_budget_usd
    }

    async fn call(&self, request: &Request) -> Result<Reply, Failure> {
        let mut command = tokio::process::Command::new(&self.command);
        command.args(["-p", "--output-format", "json", "--model", &request.model]);
        if let Some(usd) = self.max_budget_usd {
            command.args(["--max-budget-usd", &usd.to_string()]);
        }
        command
            .args(&self.args)
            .current_dir(&request.cwd)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|e| Failure::Permanent(format!("claude-cli: `{}` could not be started: {e}", self.command)))?;
        let mut group = Group { pid: child.id() };
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let prompt = request.prompt.clone();
        let feed = async move {
            let _ = stdin.write_all(prompt.as_bytes()).await;
            drop(stdin);
        };
        let mut stdout = Vec::new();
        let mut stderr = Vec::new();
        let mut out = child.stdout.take().expect("stdout is piped").take(OUTPUT_CAP);
        let mut err = child.stderr.take().expect("stderr is piped").take(OUTPUT_CAP);
        let (_, _, _, status) =
            tokio::join!(feed, out.read_to_end(&mut stdout), err.read_to_end(&mut stderr), child.wait());
        group.pid = None;
        let status = status.map_err(|e| Failure::Permanent(format!("claude-cli: waiting for it failed: {e}")))?;
        let stdout = String::from_utf8_lossy(&stdout);
        let Ok(result) = serde_json::from_str::<Value>(stdout.trim()) else {
            let stderr = String::from_utf8_lossy(&stderr);
            let tail: String = stderr.trim().chars().rev().take(500).collect::<Vec<_>>().into_iter().rev().collect();
            return Err(Failure::Permanent(format!("claude-cli: exited with {status} without a JSON result: {tail}")));
        };
        if result["is_error"] == true {
            let text = result["result"].as_str().unwrap_or("no message");
            return Err(Failure::Permanent(format!("claude-cli: the call failed: {text}")));
        }
        let usage = &result["usage"];
        let count = |key: &str| usage[key].as_i64().unwrap_or(0);
        let (read, written) = (count("cache_read_input_tokens"), count("cache_creation_input_tokens"));
        Ok(Reply {
            text: result["result"].as_str().unwrap_or_default().to_owned(),
            usage: Usage { input: count("input_tokens") + read + written, output: count("output_tokens"), cache_read: read, cache_creation: written },
            cost_usd: result["total_cost_usd"].as_f64(),
            session_id: result["session_id"].as_str().map(str::to_owned),
        })
    }
}
