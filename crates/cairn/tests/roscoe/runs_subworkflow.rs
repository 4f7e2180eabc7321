//! Subworkflows over MCP: a parent waits on a child that waits on a grandchild; the grandchild's step is the
//! pending step (answerable through any id of the tree), and each finished child resumes its parent in the same
//! call. Cancel stops the whole tree.

use serde_json::{Value, json};

use crate::runs_support::*;
use crate::support::*;

const GRANDCHILD: &str = "name: grandchild\ninitial: work\ninputs:\n  topic: { type: string, required: true }\nnodes:\n  work:\n    type: ai_agent\n    config: { prompt: \"write about {{ input.topic }}\" }\n";
const CHILD: &str = "name: child\ninitial: call\ninputs:\n  topic: { type: string, required: true }\noutputs:\n  essay: \"{{ call.output.text }}\"\nnodes:\n  call:\n    type: subworkflow\n    config: { workflow: grandchild, inputs: { topic: \"{{ input.topic }}\" } }\n";
const PARENT: &str = "name: parent\ninitial: call\nnodes:\n  call:\n    type: subworkflow\n    config: { workflow: child, inputs: { topic: owls } }\n    transitions: { success: after, failure: $fail }\n  after:\n    type: ai_agent\n    config: { prompt: \"polish: {{ call.output.essay }}\" }\n    transitions: { success: $end }\n";

/// Writes the three workflows into a project, connects, and starts `parent`: the client, the `cwd` and the start's result.
async fn start_parent(env: &Env) -> (Client, String, Value) {
    let repo = env.repo("proj");
    for (id, yaml) in [("grandchild", GRANDCHILD), ("child", CHILD), ("parent", PARENT)] {
        write_workflow(&repo, id, yaml);
    }
    let client = env.connect().await;
    let cwd = s(&repo);
    let started = client.ok("start_workflow", json!({ "cwd": cwd, "id": "parent" })).await;
    (client, cwd, started)
}

#[tokio::test]
async fn a_grandchilds_step_is_the_pending_step_and_finishing_it_resumes_every_parent() {
    let env = Env::new();
    let (client, cwd, started) = start_parent(&env).await;
    let root = started["runId"].as_str().unwrap().to_owned();
    assert_eq!(started["status"], "paused", "{started}");
    let child = started["awaitingChild"]["childRunId"].as_str().unwrap().to_owned();
    let grandchild = pending(&started, "runId").to_owned();
    assert!(grandchild != root && grandchild != child);
    assert_eq!(pending(&started, "prompt"), "write about owls");
    assert_eq!(pending(&started, "workflowId"), "grandchild");

    let status = client.ok("get_run_status", json!({ "cwd": cwd, "run_id": grandchild })).await;
    assert_eq!(status["runId"], root.as_str(), "any id of the tree describes its root");
    let child_history = client.ok("get_run_history", json!({ "cwd": cwd, "run_id": child })).await;
    assert_eq!(child_history["run"]["parentRunId"], root.as_str());
    assert_eq!(child_history["run"]["awaitingChild"]["childRunId"], grandchild.as_str());
    assert_eq!(child_history["run"]["childRunIds"], json!([grandchild]));
    let listed = client.ok("list_runs", json!({ "cwd": cwd })).await;
    assert_eq!(listed.as_array().unwrap().len(), 1, "children are hidden by default");
    let all = client.ok("list_runs", json!({ "cwd": cwd, "include_children": true })).await;
    assert_eq!(all.as_array().unwrap().len(), 3);

    // Answered through the middle run's id: the grandchild, the child and the parent's subworkflow node finish.
    let next = client.ok("advance_run", json!({ "cwd": cwd, "run_id": child, "response": "Owls are quiet." })).await;
    assert_eq!(next["runId"], root.as_str());
    assert_eq!(pending(&next, "nodeId"), "after", "{next}");
    assert_eq!(pending(&next, "runId"), root.as_str());
    assert_eq!(pending(&next, "prompt"), "polish: Owls are quiet.");
    assert!(next.get("awaitingChild").is_none());
    let done = client.ok("advance_run", json!({ "cwd": cwd, "run_id": root, "response": "Owls are very quiet." })).await;
    assert_eq!(done["status"], "completed");
    let history = client.ok("get_run_history", json!({ "cwd": cwd, "run_id": root })).await;
    assert_eq!(history["nodes"][0]["childRunId"], child.as_str());
    assert_eq!(history["nodes"][0]["output"]["output"]["essay"], "Owls are quiet.");
    client.close().await;
}

#[tokio::test]
async fn cancelling_any_run_of_a_tree_cancels_the_whole_tree() {
    let env = Env::new();
    let (client, cwd, started) = start_parent(&env).await;
    let grandchild = pending(&started, "runId").to_owned();
    let cancelled = client.ok("cancel_run", json!({ "cwd": cwd, "run_id": grandchild })).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    let all = client.ok("list_runs", json!({ "cwd": cwd, "include_children": true })).await;
    assert!(all.as_array().unwrap().iter().all(|r| r["status"] == "cancelled"), "{all}");
    let later = client.ok("advance_run", json!({ "cwd": cwd, "run_id": grandchild, "response": "x" })).await;
    assert_eq!(later["code"], "terminal");

    // A subworkflow that does not exist fails its node at run time.
    write_workflow(std::path::Path::new(&cwd), "orphan", "name: orphan\ninitial: call\nnodes:\n  call:\n    type: subworkflow\n    config: { workflow: ghost }\n");
    let failed = client.ok("start_workflow", json!({ "cwd": cwd, "id": "orphan" })).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["errorCode"], "workflow_not_found");
    client.close().await;
}
