//! `fork_run` over MCP: a new run from any node an earlier run started, with the outputs made before that node's last
//! start and the same input, going on from there (scripts before it are not run again; a human step waits again);
//! a subworkflow node's output is kept without running its child again; the original is untouched; both histories
//! name the other; a node that never started, or a subworkflow child, is refused. `roscoe runs fork` does the same
//! at the terminal.

use serde_json::{Value, json};

use crate::runs_support::*;
use crate::support::*;

/// Two scripts that log their node's name, the second using the first's output, then a person's decision.
const THREE: &str = "name: three\ninitial: a\ninputs:\n  who: { type: string, default: nobody }\nnodes:\n  a:\n    type: script\n    config: { command: \"echo a >> steps.log; echo from-a\" }\n    transitions: { success: b, failure: $fail }\n  b:\n    type: script\n    config: { command: \"echo b >> steps.log; echo got {{ a.text }} for {{ input.who }}\" }\n    transitions: { success: c, failure: $fail }\n  c:\n    type: human\n    config: { prompt: Ship? }\n    transitions: { ship: $end }\n";

/// A child of one script, called by a parent whose next script uses the child's output.
const CHILD: &str = "name: child\ninitial: work\nnodes:\n  work:\n    type: script\n    config: { command: \"echo child >> steps.log; echo child-out\" }\n    transitions: { success: $end, failure: $fail }\n";
const PARENT: &str = "name: parent\ninitial: call\nnodes:\n  call:\n    type: subworkflow\n    config: { workflow: child }\n    transitions: { success: after, failure: $fail }\n  after:\n    type: script\n    config: { command: \"echo after >> steps.log; echo saw {{ call.output.text }}\" }\n    transitions: { success: $end, failure: $fail }\n";

/// The node ids of a history, in order.
fn ran(history: &Value) -> Vec<String> {
    history["nodes"].as_array().unwrap().iter().map(|n| n["nodeId"].as_str().unwrap().to_owned()).collect()
}

/// The detail of the `fork` action of a history.
fn fork_action(history: &Value) -> Value {
    let actions = history["actions"].as_array().unwrap();
    let fork = actions.iter().find(|a| a["action"] == "fork");
    fork.unwrap_or_else(|| panic!("a fork action: {history}"))["detail"].clone()
}

#[tokio::test]
async fn a_fork_from_the_second_of_three_steps_reruns_only_the_rest() {
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(&repo, "three", THREE);
    let client = env.connect().await;
    let cwd = s(&repo);
    let started = client.ok("start_workflow", json!({ "cwd": cwd, "id": "three", "input": { "who": "ada" } })).await;
    let original = started["runId"].as_str().unwrap().to_owned();
    assert_eq!(pending(&started, "nodeId"), "c", "{started}");
    let done = client.ok("resume_run", json!({ "cwd": cwd, "run_id": original, "transition": "ship" })).await;
    assert_eq!(done["status"], "completed");
    let log = || std::fs::read_to_string(repo.join("steps.log")).unwrap();
    assert_eq!(log(), "a\nb\n");

    let forked = client.ok("fork_run", json!({ "cwd": cwd, "run_id": original, "from_node_id": "b" })).await;
    let fork = forked["runId"].as_str().unwrap().to_owned();
    assert_ne!(fork, original);
    assert_eq!(forked["status"], "paused", "the human step waits again: {forked}");
    assert_eq!(pending(&forked, "nodeId"), "c");
    assert_eq!(log(), "a\nb\nb\n", "only b ran again, not a");

    let history = client.ok("get_run_history", json!({ "cwd": cwd, "run_id": fork, "detail": "full" })).await;
    assert_eq!(ran(&history), ["b", "c"], "{history}");
    let b = &history["nodes"][0]["output"]["stdout"];
    assert_eq!(b, "got from-a\n for ada\n", "a's output (its text, newline and all) and the input kept");
    assert_eq!(fork_action(&history), json!({ "forkedFrom": { "runId": original, "nodeId": "b" } }));

    let before = client.ok("get_run_history", json!({ "cwd": cwd, "run_id": original })).await;
    assert_eq!(before["run"]["status"], "completed", "the original is untouched");
    assert_eq!(ran(&before), ["a", "b", "c"]);
    assert_eq!(fork_action(&before), json!({ "forkRunId": fork, "fromNodeId": "b" }));

    let finished = client.ok("resume_run", json!({ "cwd": cwd, "run_id": fork, "transition": "ship" })).await;
    assert_eq!(finished["status"], "completed");

    // At the terminal: `roscoe runs fork` runs b again and waits at the human step (exit 3 without a terminal).
    let cli = env.roscoe(&repo, &["runs", "fork", &original, "b"]).await;
    assert_eq!(cli.code, 3, "{cli:?}");
    assert!(cli.stderr.contains(&format!("forks run {original} from node 'b'")), "{}", cli.stderr);
    assert!(cli.stderr.contains("waits for a person at step 'c'"), "{}", cli.stderr);
    assert_eq!(log(), "a\nb\nb\nb\n");

    let nowhere = client.ok("fork_run", json!({ "cwd": cwd, "run_id": original, "from_node_id": "zzz" })).await;
    assert_eq!(nowhere["code"], "invalid_input");
    assert!(nowhere["error"].as_str().unwrap().contains("nodes that started: a, b, c"), "{nowhere}");
    let missing = client.ok("fork_run", json!({ "cwd": cwd, "run_id": "nosuchrun", "from_node_id": "a" })).await;
    assert_eq!(missing["code"], "not_found");
}

#[tokio::test]
async fn a_fork_after_a_subworkflow_keeps_its_output_without_running_the_child_again() {
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(&repo, "child", CHILD);
    write_workflow(&repo, "parent", PARENT);
    let client = env.connect().await;
    let cwd = s(&repo);
    let started = client.ok("start_workflow", json!({ "cwd": cwd, "id": "parent" })).await;
    let original = started["runId"].as_str().unwrap().to_owned();
    assert_eq!(started["status"], "completed", "{started}");
    let log = || std::fs::read_to_string(repo.join("steps.log")).unwrap();
    assert_eq!(log(), "child\nafter\n");

    let forked = client.ok("fork_run", json!({ "cwd": cwd, "run_id": original, "from_node_id": "after" })).await;
    assert_eq!(forked["status"], "completed", "{forked}");
    assert_eq!(log(), "child\nafter\nafter\n", "the child did not run again");
    let fork = forked["runId"].as_str().unwrap();
    let history = client.ok("get_run_history", json!({ "cwd": cwd, "run_id": fork, "detail": "full" })).await;
    assert_eq!(ran(&history), ["after"]);
    assert_eq!(history["nodes"][0]["output"]["stdout"], "saw child-out\n\n", "the child's output");

    let history = client.ok("get_run_history", json!({ "cwd": cwd, "run_id": original })).await;
    let child = history["nodes"][0]["childRunId"].as_str().unwrap();
    let refused = client.ok("fork_run", json!({ "cwd": cwd, "run_id": child, "from_node_id": "work" })).await;
    assert_eq!(refused["code"], "invalid_input");
    assert!(refused["error"].as_str().unwrap().contains(&format!("fork its root run {original}")), "{refused}");
}
