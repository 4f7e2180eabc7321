//! Scripts are contained (Linux): a script and a grandchild it moved out of its process group with `setsid` both stop
//! when the script times out, when its run is cancelled, when `test_workflow` gives up on it, and when the server
//! is killed with SIGKILL; the context file handed to the script is private (0600 in a 0700 directory of the cairn
//! home) and gone once the script ends, and one left by a killed server is removed by the next server to start.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::runs_support::*;
use crate::support::*;

/// A script that notes its context file, starts a `setsid` grandchild, and then both write heartbeats forever.
const TREE: &str = r#"#!/bin/sh
echo "$ROSCOE_CONTEXT_FILE" > "$1/context.path"
stat -c %a "$ROSCOE_CONTEXT_FILE" > "$1/context.mode"
setsid sh -c 'echo $$ > "$0/grand.pid.tmp" && mv "$0/grand.pid.tmp" "$0/grand.pid"; while :; do date > "$0/grand.beat"; sleep 0.2; done' "$1" &
echo $$ > "$1/script.pid.tmp" && mv "$1/script.pid.tmp" "$1/script.pid"
while :; do date > "$1/script.beat"; sleep 0.2; done
"#;

/// A project whose workflow `tree` runs [`TREE`] (with `timeoutMs` when given), and the folder the script writes to.
fn project(env: &Env, timeout_ms: Option<u64>) -> (PathBuf, PathBuf, String) {
    let repo = env.repo("proj");
    let out = repo.join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(repo.join("tree.sh"), TREE).unwrap();
    let limit = timeout_ms.map(|ms| format!(", timeoutMs: {ms}")).unwrap_or_default();
    let yaml = format!(
        "name: tree\ninitial: work\nnodes:\n  work:\n    type: script\n    config: {{ command: \"sh {} {}\"{limit} }}\n    transitions: {{ success: $end, failure: $fail }}\n",
        repo.join("tree.sh").display(),
        out.display()
    );
    write_workflow(&repo, "tree", &yaml);
    (repo, out, yaml)
}

/// The pids of the script and its grandchild, once both are written.
async fn pids(out: &Path) -> (u32, u32) {
    let read = |name: &str| std::fs::read_to_string(out.join(name)).ok().and_then(|t| t.trim().parse::<u32>().ok());
    eventually("the script and its grandchild to start", || Some((read("script.pid")?, read("grand.pid")?))).await
}

/// Waits (generously) until neither process exists; either way, ends them before the test goes on.
async fn both_stop(script: u32, grand: u32) {
    let stopped = tokio::spawn(async move {
        eventually("the script and its setsid grandchild to stop", || (!alive(script) && !alive(grand)).then_some(()))
            .await
    })
    .await;
    clean_up(&[script, grand]);
    stopped.unwrap();
}

/// The context file the script was given, checked private: 0600 in a 0700 `run` folder of the cairn home.
fn private_context(env: &Env, out: &Path) -> PathBuf {
    let path = PathBuf::from(std::fs::read_to_string(out.join("context.path")).unwrap().trim());
    assert_eq!(path.parent(), Some(env.home().join("run").as_path()), "{}", path.display());
    assert_eq!(std::fs::read_to_string(out.join("context.mode")).unwrap().trim(), "600");
    let dir_mode = std::fs::metadata(env.home().join("run")).unwrap().permissions().mode() & 0o777;
    assert_eq!(dir_mode, 0o700);
    path
}

/// Ends whatever a failed run of these tests leaves behind.
fn clean_up(pids: &[u32]) {
    for pid in pids {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .stderr(std::process::Stdio::null())
            .status();
    }
}

#[tokio::test]
async fn a_killed_server_takes_its_script_and_the_setsid_grandchild_with_it() {
    let env = Env::new();
    let (repo, out, _) = project(&env, None);
    let cwd = s(&repo);
    let (client, server) = Client::stdio_with_pid(env.command(env!("CARGO_BIN_EXE_cairn"), &["roscoe"])).await;
    let client = Arc::new(client);
    let call = {
        let (client, cwd) = (client.clone(), cwd.clone());
        tokio::spawn(async move { client.call("start_workflow", json!({ "cwd": cwd, "id": "tree" })).await })
    };
    let (script, grand) = pids(&out).await;
    assert!(alive(script) && alive(grand));
    let status = std::process::Command::new("kill").args(["-KILL", &server.to_string()]).status().unwrap();
    assert!(status.success());
    let _ = call.await;
    both_stop(script, grand).await;
    let context = private_context(&env, &out);
    assert!(context.exists(), "a server killed with SIGKILL cannot remove the context file");

    // The next server to start removes what the dead one left.
    let next = env.connect().await;
    assert!(!context.exists(), "the leftover context file was removed");
    let runs = next.ok("list_runs", json!({ "cwd": cwd })).await;
    let run_id = runs[0]["id"].as_str().unwrap().to_owned();
    let lost = next.ok("get_run_status", json!({ "cwd": cwd, "run_id": run_id })).await;
    if !env.is_postgres() {
        assert_eq!(lost["errorCode"], "runner_lost", "{lost}");
    }
    next.close().await;
}

#[tokio::test]
async fn a_timed_out_script_takes_its_setsid_grandchild_with_it() {
    let env = Env::new();
    let (repo, out, _) = project(&env, Some(2000));
    let client = env.connect().await;
    let result = client.ok("start_workflow", json!({ "cwd": s(&repo), "id": "tree" })).await;
    assert_eq!(result["status"], "failed", "{result}");
    let (script, grand) = pids(&out).await;
    both_stop(script, grand).await;
    let context = private_context(&env, &out);
    assert!(!context.exists(), "the context file is removed when the script ends");
    let history = client.ok("get_run_history", json!({ "cwd": s(&repo), "run_id": result["runId"] })).await;
    assert_eq!(history["nodes"][0]["output"]["timedOut"], true, "{history}");
    client.close().await;
}

#[tokio::test]
async fn a_cancelled_script_takes_its_setsid_grandchild_with_it() {
    let env = Env::new();
    let (repo, out, _) = project(&env, None);
    let cwd = s(&repo);
    let client = Arc::new(env.connect().await);
    let starter = {
        let (client, cwd) = (client.clone(), cwd.clone());
        tokio::spawn(async move { client.ok("start_workflow", json!({ "cwd": cwd, "id": "tree" })).await })
    };
    let (script, grand) = pids(&out).await;
    let runs = client.ok("list_runs", json!({ "cwd": cwd, "status": "running" })).await;
    let run_id = runs[0]["id"].as_str().unwrap().to_owned();
    let cancelled = client.ok("cancel_run", json!({ "cwd": cwd, "run_id": run_id })).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    both_stop(script, grand).await;
    let started: Value = starter.await.unwrap();
    assert_eq!(started["status"], "cancelled", "{started}");
    let context = private_context(&env, &out);
    assert!(!context.exists(), "the context file is removed when the script ends");
    Arc::try_unwrap(client).ok().unwrap().close().await;
}

#[tokio::test]
async fn test_workflow_giving_up_removes_the_context_file_and_stops_the_tree() {
    let env = Env::new();
    let (repo, out, yaml) = project(&env, None);
    let client = env.connect().await;
    let result = client.ok("test_workflow", json!({ "cwd": s(&repo), "yaml": yaml, "timeout_ms": 3000 })).await;
    assert_eq!(result["code"], "timeout", "{result}");
    let (script, grand) = pids(&out).await;
    both_stop(script, grand).await;
    let context = private_context(&env, &out);
    assert!(!context.exists(), "the context file is removed when test_workflow stops waiting");
    client.close().await;
}
