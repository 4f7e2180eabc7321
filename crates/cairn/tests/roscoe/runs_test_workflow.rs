//! `test_workflow` end to end: the §21 example on mocks, a missing mock, a timeout that kills its script, fan-out
//! nodes with and without mocks, and test runs that never show up and never stay behind.

use serde_json::{Value, json};

use crate::runs_support::*;
use crate::support::*;

/// The spec's worked example (§21).
const FIX_FAILING_TESTS: &str = r#"name: fix-failing-tests
description: Run the tests, fix failures, gate the merge
initial: run_tests
inputs:
  test_cmd: { type: string, default: "cargo test" }
  branch: { type: string, required: true }
nodes:
  run_tests:
    type: script
    label: Run the test suite
    config: { command: "{{ input.test_cmd }}", timeoutMs: 900000 }
    transitions: { success: review, failure: diagnose }
  diagnose:
    type: ai_agent
    label: Diagnose and fix
    maxIterations: 3
    config:
      prompt: |
        The tests failed. Output:
        {{ run_tests.stderr }}
        {{ run_tests.stdout }}
        Fix the code. Reply with a short summary of the change.
    transitions: { success: run_tests, max_iterations: ask_human }
  review:
    type: consensus
    label: Is the branch safe to merge?
    config:
      mode: gate
      agentCount: 3
      quorum: 2
      prompt: |
        Tests pass. Last fix summary: {{ diagnose.text || "no fix was needed" }}
        Review `git diff main` and decide.
    transitions: { approve: ask_human, reject: diagnose, no_consensus: ask_human }
  ask_human:
    type: human
    label: Merge?
    config:
      prompt: "Consensus: {{ review.decision || \"n/a (fix budget exhausted)\" }}. Merge the branch?"
      labels: { merge: "Merge now", stop: "Stop here" }
    transitions: { merge: merge, stop: $end }
  merge:
    type: script
    config: { command: "git merge --no-ff {{ input.branch }}" }
"#;

fn approve() -> Value {
    json!(r#"{"reasoning": "fine", "verdict": "approve"}"#)
}

fn mocks() -> Value {
    json!({
        "run_tests": [{ "exitCode": 1, "stderr": "1 failed" }, { "exitCode": 0, "stdout": "ok" }],
        "diagnose": "fixed the off-by-one",
        "review": { "responses": [approve(), approve(), approve()] },
        "ask_human": { "transition": "merge", "comment": "ship" },
        "merge": { "exitCode": 0, "stdout": "merged" },
    })
}

async fn server(env: &Env) -> Client {
    let mut command = env.command(env!("CARGO_BIN_EXE_cairn"), &["roscoe"]);
    command.env_remove("ANTHROPIC_API_KEY");
    Client::stdio(command).await
}

async fn test_runs_left(env: &Env) -> usize {
    let store = env.store().await;
    let mut conn = store.read().await.unwrap();
    let left = cairn_store::runs::test_runs(&mut conn).await.unwrap().len();
    drop(conn);
    store.close().await;
    left
}

#[tokio::test]
async fn the_worked_example_runs_on_mocks_and_leaves_nothing_behind() {
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(&repo, "fix-failing-tests", FIX_FAILING_TESTS);
    let client = server(&env).await;
    let cwd = s(&repo);
    let args = json!({ "cwd": cwd, "id": "fix-failing-tests", "input": { "branch": "feature/x" }, "mocks": mocks() });
    let result = client.ok("test_workflow", args.clone()).await;
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(result["finalStatus"], "completed");
    assert!(result["durationMs"].is_u64());
    let trace: Vec<(&str, &str)> = result["nodeTrace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["nodeId"].as_str().unwrap(), n["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        trace,
        [
            ("run_tests", "failed"),
            ("diagnose", "completed"),
            ("run_tests", "completed"),
            ("review", "completed"),
            ("ask_human", "completed"),
            ("merge", "completed"),
        ]
    );
    assert!(result["nodeTrace"][1]["input"]["prompt"].as_str().unwrap().contains("1 failed"));
    assert_eq!(result["nodeTrace"][3]["output"]["decision"], "approve");
    assert_eq!(result["nodeTrace"][3]["children"].as_array().unwrap().len(), 3);
    assert_eq!(result["nodeTrace"][4]["input"]["prompt"], "Consensus: approve. Merge the branch?");
    let brief = &result["nodeTrace"][0];
    assert!(brief.get("cost").is_none() && brief.get("phase").is_none() && brief.get("error").is_some(), "{brief}");
    let mut full = args.clone();
    full["detail"] = json!("full");
    let full = client.ok("test_workflow", full).await;
    assert!(full["nodeTrace"][0]["cost"].is_object() && full["nodeTrace"][0]["phase"].is_null(), "{full}");
    assert_eq!(client.ok("list_runs", json!({ "cwd": cwd })).await, json!([]));
    assert_eq!(test_runs_left(&env).await, 0);

    // The same workflow given inline, with a bad input: invalid_input before anything runs.
    let bad = client.ok("test_workflow", json!({ "cwd": cwd, "yaml": FIX_FAILING_TESTS, "mocks": mocks() })).await;
    assert_eq!((bad["ok"].as_bool(), bad["code"].as_str()), (Some(false), Some("invalid_input")), "{bad}");
    let missing = client.ok("test_workflow", json!({ "cwd": cwd, "id": "nope" })).await;
    assert_eq!(missing["code"], "workflow_not_found");
    let broken = client
        .ok("test_workflow", json!({ "cwd": cwd, "yaml": "name: b\ninitial: x\nnodes:\n  a: { type: ai_agent, config: { prompt: p } }\n" }))
        .await;
    assert_eq!(broken["code"], "invalid_config", "{broken}");
    assert!(broken["details"].as_array().is_some_and(|d| !d.is_empty()));
    let both = client.ok("test_workflow", json!({ "cwd": cwd, "id": "x", "yaml": "y" })).await;
    assert_eq!(both["code"], "invalid_input");
    client.close().await;
}

#[tokio::test]
async fn a_reached_step_without_a_mock_fails_fast() {
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(&repo, "fix-failing-tests", FIX_FAILING_TESTS);
    let client = server(&env).await;
    let mut mocks = mocks();
    mocks.as_object_mut().unwrap().remove("diagnose");
    let args = json!({ "cwd": s(&repo), "id": "fix-failing-tests", "input": { "branch": "b" }, "mocks": mocks });
    let result = client.ok("test_workflow", args).await;
    assert_eq!(result["ok"], false);
    assert_eq!(result["code"], "missing_mock", "{result}");
    assert_eq!((result["nodeId"].as_str(), result["nodeType"].as_str()), (Some("diagnose"), Some("ai_agent")));
    assert_eq!(result["nodeTrace"][0]["nodeId"], "run_tests");
    assert_eq!(test_runs_left(&env).await, 0);
    client.close().await;
}

#[tokio::test]
async fn fan_out_nodes_need_mocks_and_run_on_them() {
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(&repo, "fix-failing-tests", FIX_FAILING_TESTS);
    let client = server(&env).await;
    let cwd = s(&repo);
    let mut mocks = mocks();
    mocks.as_object_mut().unwrap().remove("review");
    let args = json!({ "cwd": cwd, "id": "fix-failing-tests", "input": { "branch": "b" }, "mocks": mocks });
    let refused = client.ok("test_workflow", args).await;
    assert_eq!(refused["code"], "fanout_in_test_mode_unsupported", "{refused}");
    assert_eq!((refused["nodeId"].as_str(), refused["nodeType"].as_str()), (Some("review"), Some("consensus")));

    let fanout = r#"name: fan
initial: pick
nodes:
  pick:
    type: round_robin
    config: { candidates: [red, green, blue], criterion: brightest }
    transitions: { success: each }
  each:
    type: map
    config: { items: [a, b], prompt: "do {{ item }}", reduce: { prompt: "sum {{ results }}" } }
    transitions: { success: $end }
"#;
    let mocks = json!({ "pick": { "winner": "green" }, "each": { "responses": ["A", ""], "reduce": "both" } });
    let result = client.ok("test_workflow", json!({ "cwd": cwd, "yaml": fanout, "mocks": mocks })).await;
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(result["finalStatus"], "completed");
    assert_eq!(result["nodeTrace"][0]["output"]["winner"], "green");
    assert_eq!(result["nodeTrace"][1]["output"]["succeeded"], 1);
    assert_eq!(result["nodeTrace"][1]["output"]["reduced"]["text"], "both");
    client.close().await;
}

#[tokio::test]
async fn the_time_limit_cancels_the_run_and_kills_its_script() {
    let env = Env::new();
    let repo = env.repo("proj");
    let marker = repo.join("pid");
    let yaml = format!(
        "name: slow\ninitial: wait\nnodes:\n  wait:\n    type: script\n    config: {{ command: \"echo $$ > {} && exec sleep 300\" }}\n",
        marker.display()
    );
    let client = server(&env).await;
    let result = client.ok("test_workflow", json!({ "cwd": s(&repo), "yaml": yaml, "timeout_ms": 1000 })).await;
    assert_eq!(result["ok"], false);
    assert_eq!(result["code"], "timeout", "{result}");
    assert_eq!(result["finalStatus"], "cancelled");
    assert_eq!(result["nodeTrace"][0]["status"], "cancelled");
    let pid: u32 = std::fs::read_to_string(&marker).unwrap().trim().parse().unwrap();
    eventually("the script to be killed", || (!alive(pid)).then_some(())).await;
    assert_eq!(test_runs_left(&env).await, 0);
    client.close().await;
}

#[tokio::test]
async fn a_new_server_sweeps_test_runs_left_by_a_dead_process_and_keeps_live_ones() {
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(&repo, "wait", "name: wait\ninitial: a\nnodes:\n  a: { type: ai_agent, config: { prompt: go } }\n");
    // A user run gives a real row to copy.
    let client = server(&env).await;
    let started = client.ok("start_workflow", json!({ "cwd": s(&repo), "id": "wait" })).await;
    let user_run = started["runId"].as_str().unwrap().to_owned();
    client.close().await;

    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let store = env.store().await;
    let mut conn = store.read().await.unwrap();
    let row = cairn_store::runs::get_run(&mut conn, &user_run).await.unwrap().unwrap();
    drop(conn);
    let mut tx = cairn_store::runs::begin(&store).await.unwrap();
    for (id, pid) in [("orphan", dead_pid), ("live", std::process::id())] {
        let mut test_row = row.clone();
        test_row.id = id.to_owned();
        test_row.root_run_id = id.to_owned();
        test_row.kind = "test".into();
        test_row.owner_pid = Some(i64::from(pid));
        cairn_store::runs::insert_run(&mut tx, &test_row).await.unwrap();
    }
    cairn_store::runs::commit(tx).await.unwrap();
    store.close().await;

    let client = server(&env).await;
    client.ok("list_runs", json!({ "cwd": s(&repo) })).await;
    let store = env.store().await;
    let mut conn = store.read().await.unwrap();
    let left: Vec<String> =
        cairn_store::runs::test_runs(&mut conn).await.unwrap().into_iter().map(|(id, _, _)| id).collect();
    assert_eq!(left, ["live"], "the orphan is swept, a test of a live process is kept");
    assert!(cairn_store::runs::get_run(&mut conn, &user_run).await.unwrap().is_some(), "user runs are never swept");
    drop(conn);
    store.close().await;
    client.close().await;
}
