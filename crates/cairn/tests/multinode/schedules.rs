//! Schedules: a workflow with `every: 2s` on two `cairn serve` nodes of one database starts one run per slot, never
//! two (each run's `schedule` action names its slot); after every server was down for 10 s the first look starts one
//! catch-up run and says how many slots it skipped; `roscoe schedules pause` stops new runs (and `list_workflows` and
//! `get_workflow` show the trigger paused, with its next fire time) and `resume` restarts them. On SQLite the nodes
//! share one file; with `CAIRN_TEST_POSTGRES_URL` they share a PostgreSQL database.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Client, Cluster};

/// A global workflow started every 2 seconds; its one step ends the run at once.
const TICK: &str = "name: tick\ntriggers:\n  - every: 2s\ninitial: done\nnodes:\n  done:\n    type: condition\n    \
    config: { expression: 'true' }\n    transitions: { 'true': $end, 'false': $fail }\n";

fn install(cluster: &Cluster, nodes: &[&str]) {
    for node in nodes {
        let dir = cluster.home(node).join("workflows");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tick.yaml"), TICK).unwrap();
    }
}

/// One scheduled run: its id and its `schedule` action's detail.
struct Scheduled {
    id: String,
    slot_ms: i64,
    skipped: i64,
}

/// Every run of `tick`, with the slot each was started for (oldest first).
async fn scheduled_runs(client: &Client) -> Vec<Scheduled> {
    let listed = client.ok("list_runs", json!({"global": true, "workflow_id": "tick", "limit": 200})).await;
    let mut found = Vec::new();
    for run in listed["result"].as_array().unwrap_or_else(|| panic!("{listed}")) {
        let id = run["id"].as_str().unwrap().to_owned();
        let history = client.ok("get_run_history", json!({"global": true, "run_id": id})).await;
        let actions: Vec<&Value> =
            history["actions"].as_array().unwrap().iter().filter(|a| a["action"] == "schedule").collect();
        assert_eq!(actions.len(), 1, "a scheduled run records its slot once: {history}");
        let action = actions[0];
        assert_eq!(action["principal"], "schedule:tick", "{history}");
        assert_eq!(action["via"], "schedule", "{history}");
        found.push(Scheduled {
            id,
            slot_ms: action["detail"]["slotMs"].as_i64().unwrap(),
            skipped: action["detail"]["skippedSlots"].as_i64().unwrap(),
        });
    }
    found.sort_by_key(|r| r.slot_ms);
    found
}

/// Waits (up to a minute) until `tick` has at least `count` runs; them.
async fn at_least(client: &Client, count: usize) -> Vec<Scheduled> {
    let begun = Instant::now();
    loop {
        let runs = scheduled_runs(client).await;
        if runs.len() >= count {
            return runs;
        }
        assert!(begun.elapsed() < Duration::from_secs(60), "only {} scheduled runs after a minute", runs.len());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The slots are distinct multiples of 2 s: no slot started two runs.
fn one_run_per_slot(runs: &[Scheduled]) {
    let slots: BTreeSet<i64> = runs.iter().map(|r| r.slot_ms).collect();
    let all: Vec<i64> = runs.iter().map(|r| r.slot_ms).collect();
    assert_eq!(slots.len(), runs.len(), "a slot started two runs: {all:?}");
    assert!(slots.iter().all(|s| s % 2000 == 0), "slots fall on multiples of the interval: {slots:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_start_one_run_per_slot() {
    let cluster = Cluster::any();
    install(&cluster, &["a", "b"]);
    let (a, b) = (cluster.node("a").await, cluster.node("b").await);
    let begun = Instant::now();
    let client = Client::http(&b.url("/roscoe/mcp"), None).await;
    at_least(&client, 5).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let elapsed = begun.elapsed();
    let runs = scheduled_runs(&client).await;
    one_run_per_slot(&runs);
    // One run per 2 s since the nodes started (the first slot after the schedule was first seen): loosely.
    let expected = elapsed.as_secs_f64() / 2.0;
    assert!(
        (runs.len() as f64) <= expected + 1.0 && (runs.len() as f64) >= expected - 3.0,
        "{} runs in {elapsed:?}",
        runs.len()
    );
    assert!(runs.iter().all(|r| r.skipped == 0), "no slot was skipped while the nodes ran");
    let first = &runs[0];
    let status = client.ok("get_run_status", json!({"global": true, "run_id": first.id})).await;
    assert_eq!(status["status"], "completed", "{status}");
    drop(a);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn after_every_server_was_down_one_catch_up_run_starts() {
    let cluster = Cluster::any();
    install(&cluster, &["a"]);
    let mut a = cluster.node("a").await;
    let client = Client::http(&a.url("/roscoe/mcp"), None).await;
    let before = at_least(&client, 1).await;
    client.close().await;
    a.signal("KILL");
    a.exited().await;
    let killed_after = before.last().unwrap().slot_ms;
    tokio::time::sleep(Duration::from_secs(10)).await;

    let again = cluster.node("a").await;
    let client = Client::http(&again.url("/roscoe/mcp"), None).await;
    let runs = at_least(&client, before.len() + 1).await;
    one_run_per_slot(&runs);
    let catch_up: Vec<&Scheduled> = runs.iter().filter(|r| r.slot_ms > killed_after && r.skipped > 0).collect();
    let all: Vec<(i64, i64)> = runs.iter().map(|r| (r.slot_ms, r.skipped)).collect();
    assert_eq!(catch_up.len(), 1, "one catch-up run: {all:?}");
    let catch_up = catch_up[0];
    // About 10 s down at 2 s a slot: some four slots skipped (loosely: at least three).
    assert!(catch_up.skipped >= 3, "skipped {}", catch_up.skipped);
    let between = runs.iter().filter(|r| r.slot_ms > killed_after && r.slot_ms < catch_up.slot_ms).count();
    assert_eq!(between, 0, "no run for the slots passed over");

    let listed = cluster.roscoe("a", &["schedules", "list", "--global", "--json"]).await;
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed[0]["workflowId"], "tick", "{listed}");
    assert_eq!(listed[0]["skippedSlots"], catch_up.skipped, "the list shows what the catch-up skipped: {listed}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_paused_schedule_starts_nothing_until_resumed() {
    let cluster = Cluster::any();
    install(&cluster, &["a"]);
    let a = cluster.node("a").await;
    let client = Client::http(&a.url("/roscoe/mcp"), None).await;
    at_least(&client, 1).await;

    let paused = cluster.roscoe("a", &["schedules", "pause", "tick", "--global", "--json"]).await;
    let paused: Value = serde_json::from_str(&paused).unwrap();
    assert_eq!(paused[0]["paused"], true, "{paused}");
    let table = cluster.roscoe("a", &["schedules", "list", "--global"]).await;
    assert!(table.contains("every 2s") && table.contains("yes"), "{table}");
    let listed = client.ok("list_workflows", json!({"global": true})).await;
    let tick = listed["result"].as_array().unwrap().iter().find(|w| w["id"] == "tick").cloned().unwrap();
    assert_eq!(tick["triggers"][0]["kind"], "every", "{tick}");
    assert_eq!(tick["triggers"][0]["expression"], "2s", "{tick}");
    assert_eq!(tick["triggers"][0]["paused"], true, "{tick}");
    assert!(tick["triggers"][0]["nextFireAt"].as_str().is_some_and(|t| t.ends_with('Z')), "{tick}");
    let detail = client.ok("get_workflow", json!({"global": true, "id": "tick"})).await;
    assert_eq!(detail["triggerStates"][0]["paused"], true, "{detail}");
    // A slot claimed just before the pause may still be starting its run: count from a moment later.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let held = scheduled_runs(&client).await.len();
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(scheduled_runs(&client).await.len(), held, "a paused schedule started a run");

    let resumed = cluster.roscoe("a", &["schedules", "resume", "tick", "--global", "--json"]).await;
    let resumed: Value = serde_json::from_str(&resumed).unwrap();
    assert_eq!(resumed[0]["paused"], false, "{resumed}");
    let detail = client.ok("get_workflow", json!({"global": true, "id": "tick"})).await;
    assert_eq!(detail["triggerStates"][0]["paused"], false, "{detail}");
    let runs = at_least(&client, held + 1).await;
    one_run_per_slot(&runs);
    assert!(runs.iter().all(|r| r.skipped == 0), "the slots missed while paused are not caught up");
    client.close().await;
}
