//! Two server processes on one database answer the same pending step at the same moment: exactly one answer is
//! applied, the other is refused with `stale_step`.

use serde_json::{Value, json};

use crate::runs_support::*;
use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_two_simultaneous_answers_exactly_one_is_applied() {
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(
        &repo,
        "race",
        "name: race\ninitial: work\nnodes:\n  work:\n    type: ai_agent\n    config: { prompt: go }\n    transitions: { success: ask }\n  ask:\n    type: human\n    config: { prompt: done? }\n    transitions: { done: $end }\n",
    );
    let cwd = s(&repo);
    let first = env.connect().await;
    let second = env.connect().await;
    for round in 0..10 {
        let started = first.ok("start_workflow", json!({ "cwd": cwd, "id": "race" })).await;
        let run_id = started["runId"].as_str().unwrap();
        let answer = |who: &str| json!({ "cwd": cwd, "run_id": run_id, "node_id": "work", "response": who });
        let (a, b) = tokio::join!(first.ok("advance_run", answer("first")), second.ok("advance_run", answer("second")));
        let outcomes: Vec<&Value> = [&a, &b].into_iter().collect();
        let applied: Vec<&&Value> = outcomes.iter().filter(|r| r.get("code").is_none()).collect();
        let refused: Vec<&&Value> = outcomes.iter().filter(|r| r["code"] == "stale_step").collect();
        assert_eq!((applied.len(), refused.len()), (1, 1), "round {round}: {a} / {b}");
        assert_eq!(pending(applied[0], "nodeId"), "ask");
        let history = first.ok("get_run_history", json!({ "cwd": cwd, "run_id": run_id })).await;
        let work: Vec<&Value> =
            history["nodes"].as_array().unwrap().iter().filter(|n| n["nodeId"] == "work").collect();
        assert_eq!(work.len(), 1, "round {round}: the node was answered once");
        assert_eq!(work[0]["attempts"], 1);
    }
    first.close().await;
    second.close().await;
}
