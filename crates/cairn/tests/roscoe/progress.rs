//! Live progress over MCP: the official Python client (PyPI `mcp`, installed by `.ci/python-mcp.sh`) calls
//! `start_workflow` with a `progressToken` on a workflow whose script runs 6 s, and receives `notifications/progress`
//! during the call: the script's start, its running beats, its end, and the next step's pause, progress increasing.
//! A client of protocol 2026-07-28 (stateless, no session) gets the same notifications on its request's own response
//! stream, before the result.

use std::path::Path;

use serde_json::Value;

use crate::runs_support::write_workflow;
use crate::support::*;

/// A 6-second script, then a person's decision.
const SLOW: &str = "name: slow\ninitial: build\nnodes:\n  build:\n    type: script\n    config: { command: \"sleep 6; echo built\" }\n    transitions: { success: ship, failure: $fail }\n  ship:\n    type: human\n    config: { prompt: Ship? }\n    transitions: { go: $end }\n";

/// The venv's Python with `mcp`, or `None` (outside CI) when it is not installed.
pub fn python() -> Option<std::path::PathBuf> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-venv/bin/python");
    if python.is_file() {
        return Some(python);
    }
    assert!(std::env::var("CI").as_deref() != Ok("true"), "CI must install the Python MCP SDK (.ci/python-mcp.sh)");
    eprintln!("skipped: needs {} (bash .ci/python-mcp.sh)", python.display());
    None
}

#[tokio::test]
async fn a_python_client_with_a_progress_token_sees_a_long_script_run() {
    let Some(python) = python() else { return };
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(&repo, "slow", SLOW);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/roscoe/progress_client.py");
    let mut command = env.cli(&python.display().to_string(), &[]);
    command.arg(&script).arg(env!("CARGO_BIN_EXE_cairn")).arg(&repo).arg("slow");
    let output = command.output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["result"]["status"], "paused", "{printed}");
    let progress = printed["progress"].as_array().unwrap();
    let messages: Vec<&str> = progress.iter().map(|p| p["message"].as_str().unwrap()).collect();
    assert_eq!(messages.first(), Some(&"build (script) started"), "{messages:?}");
    let beats = messages.iter().filter(|m| m.starts_with("build (script) running, ")).count();
    assert!(beats >= 1, "the running script is reported while it runs: {messages:?}");
    assert!(messages.contains(&"build (script) completed"), "{messages:?}");
    assert_eq!(messages.last(), Some(&"ship (human) paused"), "{messages:?}");
    let numbers: Vec<f64> = progress.iter().map(|p| p["progress"].as_f64().unwrap()).collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "progress increases: {numbers:?}");
}

#[tokio::test]
async fn a_stateless_2026_07_28_request_gets_its_progress_on_its_own_response_stream() {
    let env = Env::new();
    let dir = env.home().join("workflows");
    std::fs::create_dir_all(&dir).unwrap();
    let quick = "name: quick\ninitial: build\nnodes:\n  build:\n    type: script\n    config: { command: \"sleep 3; echo built\" }\n    transitions: { success: $end, failure: $fail }\n";
    std::fs::write(dir.join("quick.yaml"), quick).unwrap();
    let served = crate::cairn_serve::Served::start(env.cli(env!("CARGO_BIN_EXE_cairn"), &["serve"])).await;
    let meta = serde_json::json!({
        "progressToken": "p1",
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "stateless-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "start_workflow", "arguments": {"global": true, "id": "quick"}, "_meta": meta}});
    let answer = reqwest::Client::new()
        .post(served.url("/roscoe/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "start_workflow")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert!(answer.headers().get("mcp-session-id").is_none(), "no session on 2026-07-28");
    let text = answer.text().await.unwrap();
    let messages: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str(data).ok())
        .collect();
    let progress: Vec<&str> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["message"].as_str().unwrap())
        .collect();
    assert_eq!(progress.first(), Some(&"build (script) started"), "{text}");
    assert!(progress.contains(&"build (script) completed"), "{text}");
    let last = messages.last().unwrap();
    assert_eq!(last["id"], 1, "the result comes last, after the progress: {text}");
    assert!(last["result"]["structuredContent"]["status"] == "completed", "{text}");
}
