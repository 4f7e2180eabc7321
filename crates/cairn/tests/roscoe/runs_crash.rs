//! Crash safety: the server is killed with SIGKILL between two advances and in the middle of a script; a new
//! server process carries the paused run on, reports the interrupted one as `runner_lost`, and runs nothing twice.

use std::sync::Arc;

use serde_json::json;

use crate::runs_support::*;
use crate::support::*;

/// A connected `cairn roscoe mcp` and its process id.
async fn server(env: &Env) -> (Client, u32) {
    Client::stdio_with_pid(env.command(env!("CARGO_BIN_EXE_cairn"), &["roscoe"])).await
}

fn kill9(pid: u32) {
    let status = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn a_new_server_continues_a_paused_run_and_reports_an_interrupted_script() {
    let env = Env::new();
    let repo = env.repo("proj");
    let count = repo.join("count");
    let marker = repo.join("pid");
    write_workflow(
        &repo,
        "steps",
        &format!(
            "name: steps\ninitial: prep\nnodes:\n  prep:\n    type: script\n    config: {{ command: \"echo x >> {}\" }}\n    transitions: {{ success: write }}\n  write:\n    type: ai_agent\n    maxIterations: 3\n    config: {{ prompt: go }}\n    transitions: {{ success: check }}\n  check:\n    type: ai_judge\n    config: {{ prompt: ok? }}\n    transitions: {{ pass: $end, fail: write }}\n",
            count.display()
        ),
    );
    write_workflow(
        &repo,
        "slow",
        &format!(
            "name: slow\ninitial: wait\nnodes:\n  wait:\n    type: script\n    config: {{ command: \"echo x >> {} && echo $$ > {} && exec sleep 300\" }}\n",
            count.display(),
            marker.display()
        ),
    );
    let cwd = s(&repo);

    // Killed between advances: the paused run is just rows.
    let (client, pid) = server(&env).await;
    let started = client.ok("start_workflow", json!({ "cwd": cwd, "id": "steps" })).await;
    let run_id = started["runId"].as_str().unwrap_or_else(|| panic!("{started}")).to_owned();
    client.ok("advance_run", json!({ "cwd": cwd, "run_id": run_id, "response": "written" })).await;
    kill9(pid);
    let _ = client.service.cancel().await;

    let (client, _) = server(&env).await;
    let status = client.ok("get_run_status", json!({ "cwd": cwd, "run_id": run_id })).await;
    assert_eq!(status["status"], "paused", "{status}");
    assert_eq!(pending(&status, "nodeId"), "check");
    let done = client
        .ok("advance_run", json!({ "cwd": cwd, "run_id": run_id, "node_id": "check", "response": r#"{"verdict": "pass"}"# }))
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    let history = client.ok("get_run_history", json!({ "cwd": cwd, "run_id": run_id })).await;
    let nodes: Vec<&str> = history["nodes"].as_array().unwrap().iter().map(|n| n["nodeId"].as_str().unwrap()).collect();
    assert_eq!(nodes, ["prep", "write", "check"], "each node ran exactly once");
    assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 1);

    // Killed while a script runs: the next server reports the run failed (runner_lost) and does not re-run it.
    let client = Arc::new(client);
    let (doomed, doomed_pid) = server(&env).await;
    let doomed = Arc::new(doomed);
    let call = {
        let (doomed, cwd) = (doomed.clone(), cwd.clone());
        tokio::spawn(async move { doomed.call("start_workflow", json!({ "cwd": cwd, "id": "slow" })).await })
    };
    let script: u32 = eventually("the script to start", || {
        std::fs::read_to_string(&marker).ok().and_then(|t| t.trim().parse().ok())
    })
    .await;
    kill9(doomed_pid);
    let _ = call.await;
    let runs = client.ok("list_runs", json!({ "cwd": cwd, "workflow_id": "slow" })).await;
    let slow_id = runs[0]["id"].as_str().unwrap().to_owned();
    let mut status = client.ok("get_run_status", json!({ "cwd": cwd, "run_id": slow_id })).await;
    if env.is_postgres() {
        // A shared Postgres may serve nodes on other machines, so a runner's process id proves nothing here: the
        // run is lost once the dead process's lease (30 s, renewed every 10 s) lapses.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while status["status"] == "running" && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            status = client.ok("get_run_status", json!({ "cwd": cwd, "run_id": slow_id })).await;
        }
    }
    assert_eq!(status["status"], "failed", "{status}");
    assert_eq!(status["errorCode"], "runner_lost");
    let history = client.ok("get_run_history", json!({ "cwd": cwd, "run_id": slow_id })).await;
    assert_eq!(history["nodes"][0]["status"], "failed");
    assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 2, "the script was not started again");
    // The script died with its server (runs_containment.rs shows it); where it could not, the test ends it.
    let _ = std::process::Command::new("kill").args(["-KILL", "--", &format!("-{script}")]).stderr(std::process::Stdio::null()).status();
    eventually("the orphaned script to stop", || (!alive(script)).then_some(())).await;
    Arc::try_unwrap(client).ok().unwrap().close().await;
}
