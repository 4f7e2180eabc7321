//! Durable timers: a human step's `timeoutMs` takes its `timeout` route on time on a `cairn serve` that nobody
//! calls, once after a SIGKILL and restart across its due time, and once when two nodes on PostgreSQL both watch it;
//! a node's `delayMs` holds the run, then the node starts on its own, once, across a kill too.
//! The runs are observed through `list_runs`, which reads rows and fires nothing itself.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::cairn_serve::Served;
use crate::support::{Client, Cluster};

/// A release gate: approve within `timeoutMs`, else stop.
fn gate(timeout_ms: u64) -> String {
    format!(
        "name: gate\ninitial: approve\nnodes:\n  approve:\n    type: human\n    timeoutMs: {timeout_ms}\n    \
         config: {{ prompt: Ship it? }}\n    transitions: {{ ship: $end, timeout: $fail }}\n"
    )
}

/// Writes the gate workflow into the home of each of `nodes`.
fn install(cluster: &Cluster, nodes: &[&str], timeout_ms: u64) {
    for node in nodes {
        let dir = cluster.home(node).join("workflows");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("gate.yaml"), gate(timeout_ms)).unwrap();
    }
}

/// Starts the gate through `client`: its run id.
async fn start(client: &Client) -> String {
    let started = client.ok("start_workflow", json!({"global": true, "id": "gate"})).await;
    assert_eq!(started["status"], "paused", "{started}");
    started["runId"].as_str().unwrap().to_owned()
}

/// The status `list_runs` shows for `run_id`.
async fn listed_status(client: &Client, run_id: &str) -> String {
    let listed = client.ok("list_runs", json!({"global": true})).await;
    let runs = listed["result"].as_array().unwrap_or_else(|| panic!("{listed}"));
    let run = runs.iter().find(|r| r["id"] == run_id).unwrap_or_else(|| panic!("{listed}"));
    run["status"].as_str().unwrap().to_owned()
}

/// Waits (up to a minute: a generous bound, not a timing claim) until `list_runs` shows `run_id` no longer paused;
/// its status then, and how long that took from `since`.
async fn settled(client: &Client, run_id: &str, since: Instant) -> (String, Duration) {
    loop {
        let status = listed_status(client, run_id).await;
        if status != "paused" {
            return (status, since.elapsed());
        }
        assert!(since.elapsed() < Duration::from_secs(60), "run {run_id} was never timed out");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Closes `client`, kills node `a` of `cluster` (SIGKILL), lets 2.5 s pass while no server runs (a timer's due time
/// falls in it) and starts `a` again: the new server, and a client of it.
async fn killed_and_restarted(cluster: &Cluster, mut a: Served, client: Client) -> (Served, Client) {
    client.close().await;
    a.signal("KILL");
    a.exited().await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let again = cluster.node("a").await;
    let client = Client::http(&again.url("/roscoe/mcp"), None).await;
    (again, client)
}

/// The visits of the gate's node in `run_id`'s history: there must be exactly one, ended by its timeout.
async fn one_timeout(client: &Client, run_id: &str) {
    let history = client.ok("get_run_history", json!({"global": true, "run_id": run_id})).await;
    let visits: Vec<&Value> =
        history["nodes"].as_array().unwrap().iter().filter(|n| n["nodeId"] == "approve").collect();
    assert_eq!(visits.len(), 1, "{history}");
    assert_eq!(visits[0]["output"]["timedOut"], true, "{history}");
    let status = client.ok("get_run_status", json!({"global": true, "run_id": run_id})).await;
    assert_eq!(status["status"], "failed", "{status}");
    assert!(status.get("timeoutAt").is_none(), "a finished run has no timer: {status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_human_step_nobody_answers_times_out_on_its_own() {
    let cluster = Cluster::any();
    install(&cluster, &["a"], 2000);
    let a = cluster.node("a").await;
    let client = Client::http(&a.url("/roscoe/mcp"), None).await;
    let begun = Instant::now();
    let run_id = start(&client).await;
    let status = client.ok("get_run_status", json!({"global": true, "run_id": run_id})).await;
    let timeout_at = status["timeoutAt"].as_str().unwrap_or_else(|| panic!("a paused gate says when: {status}"));
    assert!(timeout_at.ends_with('Z'), "{timeout_at}");
    let (status, took) = settled(&client, &run_id, begun).await;
    assert_eq!(status, "failed");
    assert!(took >= Duration::from_millis(2000), "not before its time: {took:?}");
    println!("timed out {took:?} after start (timeoutMs 2000)");
    one_timeout(&client, &run_id).await;
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_timer_outlives_a_killed_server_and_fires_once_after_restart() {
    let cluster = Cluster::any();
    install(&cluster, &["a"], 1500);
    let a = cluster.node("a").await;
    let client = Client::http(&a.url("/roscoe/mcp"), None).await;
    let run_id = start(&client).await;
    let (_again, client) = killed_and_restarted(&cluster, a, client).await;
    let (status, _) = settled(&client, &run_id, Instant::now()).await;
    assert_eq!(status, "failed");
    one_timeout(&client, &run_id).await;
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_watching_one_timer_fire_it_once() {
    let Some(cluster) = Cluster::postgres("timers") else { return };
    install(&cluster, &["a", "b"], 1000);
    let (a, b) = (cluster.node("a").await, cluster.node("b").await);
    let first = Client::http(&a.url("/roscoe/mcp"), None).await;
    let second = Client::http(&b.url("/roscoe/mcp"), None).await;
    let mut runs = Vec::new();
    for _ in 0..5 {
        runs.push(start(&first).await);
    }
    let begun = Instant::now();
    for run_id in &runs {
        let (status, _) = settled(&second, run_id, begun).await;
        assert_eq!(status, "failed");
        one_timeout(&second, run_id).await;
    }
    first.close().await;
    second.close().await;
}

/// A wait before a step: `delayMs` on a condition that then ends the run.
fn pause(delay_ms: u64) -> String {
    format!(
        "name: pause\ninitial: later\nnodes:\n  later:\n    type: condition\n    \
         config: {{ expression: 'true', delayMs: {delay_ms} }}\n    transitions: {{ 'true': $end, 'false': $fail }}\n"
    )
}

/// The visits of node `node_id` in `run_id`'s history.
async fn visits(client: &Client, run_id: &str, node_id: &str) -> Vec<Value> {
    let history = client.ok("get_run_history", json!({"global": true, "run_id": run_id})).await;
    history["nodes"].as_array().unwrap().iter().filter(|n| n["nodeId"] == node_id).cloned().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_delay_holds_the_run_and_its_node_starts_on_its_own_once_across_a_kill() {
    let cluster = Cluster::any();
    let dir = cluster.home("a").join("workflows");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pause.yaml"), pause(2000)).unwrap();
    let a = cluster.node("a").await;
    let client = Client::http(&a.url("/roscoe/mcp"), None).await;
    let begun = Instant::now();
    let started = client.ok("start_workflow", json!({"global": true, "id": "pause"})).await;
    assert_eq!(started["status"], "paused", "{started}");
    assert!(started.get("pendingStep").is_none(), "a delay is no step for the host: {started}");
    assert!(started["resumesAt"].as_str().is_some_and(|t| t.ends_with('Z')), "it says when: {started}");
    let run_id = started["runId"].as_str().unwrap().to_owned();
    let early = client.ok("advance_run", json!({"global": true, "run_id": run_id, "response": "x"})).await;
    assert_eq!(early["code"], "not_paused", "{early}");
    assert!(early["error"].as_str().unwrap_or_default().contains("delayMs"), "{early}");

    let (status, took) = settled(&client, &run_id, begun).await;
    assert_eq!(status, "completed");
    assert!(took >= Duration::from_millis(2000), "not before its time: {took:?}");
    println!("the delayed node started {took:?} after the run (delayMs 2000)");
    assert_eq!(visits(&client, &run_id, "later").await.len(), 1);

    // Killed while a run waits; its time passes while no server runs; the restarted server starts the node once.
    let started = client.ok("start_workflow", json!({"global": true, "id": "pause"})).await;
    let run_id = started["runId"].as_str().unwrap().to_owned();
    let (_again, client) = killed_and_restarted(&cluster, a, client).await;
    let (status, _) = settled(&client, &run_id, Instant::now()).await;
    assert_eq!(status, "completed");
    let visited = visits(&client, &run_id, "later").await;
    assert_eq!(visited.len(), 1, "{visited:?}");
    assert_eq!(visited[0]["event"], "true", "{visited:?}");

    // test_workflow does not keep time: an hour's delay is skipped.
    std::fs::write(cluster.home("a").join("workflows/pause.yaml"), pause(3_600_000)).unwrap();
    let tested = client.ok("test_workflow", json!({"global": true, "id": "pause", "timeout_ms": 60000})).await;
    assert_eq!(tested["ok"], true, "{tested}");
    client.close().await;
}
