//! Fan-out nodes over MCP: consensus (retry only when it matters, most-consistent aggregate), round-robin waves and
//! contested re-judging, map with a failed branch and a reduce — each driven through its own advance tool.

use serde_json::{Value, json};

use crate::runs_support::*;
use crate::support::*;

fn verdict(v: &str) -> String {
    format!(r#"{{"reasoning": "because", "verdict": "{v}"}}"#)
}

async fn start(client: &Client, cwd: &str, id: &str) -> (String, Value) {
    let started = client.ok("start_workflow", json!({ "cwd": cwd, "id": id })).await;
    (started["runId"].as_str().unwrap().to_owned(), started)
}

const GATE: &str = r#"name: gate
initial: vote
nodes:
  vote:
    type: consensus
    config: { mode: gate, agentCount: 5, quorum: 3, prompt: "Deploy?" }
    transitions: { approve: $end, reject: $fail, no_consensus: $fail }
"#;

#[tokio::test]
async fn consensus_retries_only_the_invalid_agents_whose_votes_could_change_the_outcome() {
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(&repo, "gate", GATE);
    let client = env.connect().await;
    let cwd = s(&repo);

    // Settled: three approvals reach the quorum whatever the two invalid agents would say.
    let (run, started) = start(&client, &cwd, "gate").await;
    assert_eq!(pending(&started, "consensusPhase"), "generate");
    assert_eq!(started["hostHint"]["kind"], "no_subagents", "the test client is not known to spawn subagents");
    assert_eq!(started["pendingStep"]["agentCount"], 5);
    assert_eq!(started["pendingStep"]["agents"].as_array().unwrap().len(), 5);
    let short = client.ok("advance_consensus", json!({ "cwd": cwd, "run_id": run, "responses": ["x"] })).await;
    assert_eq!((short["code"].as_str(), short["error"].as_str()), (Some("wrong_response_count"), Some("Expected 5 responses, got 1")));
    let wrong = client.ok("advance_run", json!({ "cwd": cwd, "run_id": run, "response": "x" })).await;
    assert_eq!(wrong["code"], "wrong_tool");
    let responses = [verdict("approve"), verdict("approve"), verdict("approve"), "??".into(), "no".into()];
    let done = client.ok("advance_consensus", json!({ "cwd": cwd, "run_id": run, "responses": responses })).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["output"]["decision"], "approve");
    assert_eq!(done["output"]["settledEarly"], true);

    // Open: 2 approve, 1 reject, 2 invalid could still go either way, so only those two are asked again.
    let (run, _) = start(&client, &cwd, "gate").await;
    let responses = [verdict("approve"), "bad".into(), verdict("reject"), verdict("approve"), "worse".into()];
    let retry = client.ok("advance_consensus", json!({ "cwd": cwd, "run_id": run, "responses": responses })).await;
    assert_eq!(pending(&retry, "consensusPhase"), "retry", "{retry}");
    assert_eq!(retry["pendingStep"]["agentCount"], 2);
    let indexes: Vec<u64> =
        retry["pendingStep"]["agents"].as_array().unwrap().iter().map(|a| a["index"].as_u64().unwrap()).collect();
    assert_eq!(indexes, [1, 4]);
    assert!(retry["pendingStep"]["agents"][0]["prompt"].as_str().unwrap().contains("previous answer was invalid"));
    let done = client
        .ok("advance_consensus", json!({ "cwd": cwd, "run_id": run, "responses": [verdict("approve"), verdict("reject")] }))
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["output"]["votes"], json!({ "approve": 3, "reject": 2 }));
    let history = client.ok("get_run_history", json!({ "cwd": cwd, "run_id": run })).await;
    assert_eq!(history["nodes"][0]["children"].as_array().unwrap().len(), 7, "5 agents, then 2 retried");
    client.close().await;
}

#[tokio::test]
async fn most_consistent_generates_then_aggregates() {
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(
        &repo,
        "usc",
        "name: usc\ninitial: ask\nnodes:\n  ask:\n    type: consensus\n    config: { mode: most_consistent, agentCount: 3, prompt: \"Best name?\" }\n    transitions: { success: $end }\n",
    );
    let client = env.connect().await;
    let cwd = s(&repo);
    let (run, _) = start(&client, &cwd, "usc").await;
    let aggregate = client
        .ok("advance_consensus", json!({ "cwd": cwd, "run_id": run, "responses": ["Alpha", "Beta", "Beta!"] }))
        .await;
    assert_eq!(pending(&aggregate, "consensusPhase"), "aggregate", "{aggregate}");
    assert_eq!(aggregate["pendingStep"]["agentCount"], 1);
    let prompt = aggregate["pendingStep"]["agents"][0]["prompt"].as_str().unwrap();
    assert!(prompt.contains("[0] Alpha") && prompt.contains("[2] Beta!"), "{prompt}");
    let bad = client.ok("advance_consensus", json!({ "cwd": cwd, "run_id": run, "responses": [r#"{"index": 7}"#] })).await;
    assert_eq!(bad["code"], "invalid_response");
    let done = client
        .ok("advance_consensus", json!({ "cwd": cwd, "run_id": run, "responses": [r#"{"reasoning": "r", "index": 1}"#] }))
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["output"]["answer"], "Beta");
    client.close().await;
}

#[tokio::test]
async fn round_robin_takes_verdicts_in_waves_and_rejudges_contested_pairs() {
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(
        &repo,
        "rr",
        "name: rr\ninitial: pick\nnodes:\n  pick:\n    type: round_robin\n    config: { candidates: [red, green, blue], criterion: brightest, mode: contested }\n    transitions: { success: $end }\n",
    );
    let client = env.connect().await;
    let cwd = s(&repo);
    let (run, started) = start(&client, &cwd, "rr").await;
    assert_eq!(pending(&started, "roundRobinPhase"), "first");
    let ids: Vec<&str> =
        started["pendingStep"]["matchups"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["m1", "m2", "m3"]);
    assert_eq!(started["pendingStep"]["criterion"], "brightest");
    let wave = json!({ "m1": { "winner": "B", "margin": 80 }, "m2": r#"{"winner": "a", "margin": 10}"#, "zz": { "winner": "A", "margin": 1 } });
    let partial = client.ok("advance_round_robin", json!({ "cwd": cwd, "run_id": run, "verdicts": wave })).await;
    assert_eq!(partial["status"], "paused", "{partial}");
    assert_eq!(partial["rejected"][0]["id"], "zz");
    let left: Vec<&str> =
        partial["pendingStep"]["matchups"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(left, ["m3"]);
    let bad = client
        .ok("advance_round_robin", json!({ "cwd": cwd, "run_id": run, "verdicts": { "m3": { "winner": "C", "margin": 5 } } }))
        .await;
    assert_eq!(bad["rejected"][0]["id"], "m3");
    let contested = client
        .ok("advance_round_robin", json!({ "cwd": cwd, "run_id": run, "verdicts": { "m3": { "winner": "A", "margin": 60 } } }))
        .await;
    assert_eq!(pending(&contested, "roundRobinPhase"), "contested", "{contested}");
    let reversed: Vec<(&str, &str, &str)> = contested["pendingStep"]["matchups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["id"].as_str().unwrap(), m["a"].as_str().unwrap(), m["reversedOf"].as_str().unwrap()))
        .collect();
    assert_eq!(reversed, [("r1", "green", "m1"), ("r2", "blue", "m2"), ("r3", "blue", "m3")]);
    // r1 agrees (green beats red again); r2 disagrees (blue now beats red: a draw); r3 agrees (green beats blue).
    let verdicts = json!({ "r1": { "winner": "A", "margin": 90 }, "r2": { "winner": "A", "margin": 30 }, "r3": { "winner": "B", "margin": 40 } });
    let done = client.ok("advance_round_robin", json!({ "cwd": cwd, "run_id": run, "verdicts": verdicts })).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["output"]["winner"], "green");
    let standings: Vec<(&str, f64)> = done["output"]["standings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["candidate"].as_str().unwrap(), s["score"].as_f64().unwrap()))
        .collect();
    // red and blue tie on score; blue lost to green by less (mean margin 50 against 85), so it ranks higher.
    assert_eq!(standings, [("green", 2.0), ("blue", 0.5), ("red", 0.5)]);
    assert_eq!(done["output"]["standings"][1]["netMargin"], -50);
    client.close().await;
}

#[tokio::test]
async fn map_extracts_branches_counts_an_empty_one_as_failed_and_reduces() {
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(
        &repo,
        "mapper",
        "name: mapper\ninitial: each\nnodes:\n  each:\n    type: map\n    config: { items: \"files: a.rs and b.rs and c.rs\", prompt: \"review {{ item }} ({{ index }})\", reduce: { prompt: \"merge {{ results }}\" } }\n    transitions: { success: $end, failure: $fail }\n",
    );
    let client = env.connect().await;
    let cwd = s(&repo);
    let (run, started) = start(&client, &cwd, "mapper").await;
    assert_eq!(pending(&started, "mapPhase"), "extract");
    assert_eq!(started["pendingStep"]["agentCount"], 1);
    let mapped = client
        .ok("advance_map", json!({ "cwd": cwd, "run_id": run, "responses": [r#"["a.rs", "b.rs", "c.rs"]"#] }))
        .await;
    assert_eq!(pending(&mapped, "mapPhase"), "map", "{mapped}");
    assert_eq!(mapped["pendingStep"]["agents"][1]["prompt"], "review b.rs (1)");
    let wrong = client.ok("advance_map", json!({ "cwd": cwd, "run_id": run, "responses": ["x"] })).await;
    assert_eq!(wrong["code"], "wrong_response_count");
    let reduce = client
        .ok("advance_map", json!({ "cwd": cwd, "run_id": run, "responses": ["fine", "  ", "bug on line 3"] }))
        .await;
    assert_eq!(pending(&reduce, "mapPhase"), "reduce", "{reduce}");
    let prompt = reduce["pendingStep"]["agents"][0]["prompt"].as_str().unwrap();
    assert!(prompt.contains("bug on line 3") && !prompt.contains("b.rs"), "{prompt}");
    let done = client.ok("advance_map", json!({ "cwd": cwd, "run_id": run, "responses": ["one bug"] })).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!((done["output"]["succeeded"].as_u64(), done["output"]["failed"].as_u64()), (Some(2), Some(1)));
    assert_eq!(done["output"]["reduced"]["text"], "one bug");
    let history = client.ok("get_run_history", json!({ "cwd": cwd, "run_id": run })).await;
    let kinds: Vec<&str> = history["nodes"][0]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["nodeType"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["map_extract", "map_branch", "map_branch", "map_branch", "map_reduce"]);

    // Every branch failed: no reduce, and the node fails.
    let (run, _) = start(&client, &cwd, "mapper").await;
    client.ok("advance_map", json!({ "cwd": cwd, "run_id": run, "responses": [r#"["a"]"#] })).await;
    let failed = client.ok("advance_map", json!({ "cwd": cwd, "run_id": run, "responses": [""] })).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["errorCode"], "routed_to_fail");
    client.close().await;
}
