//! Runs end to end over stdio: start → scripts and conditions run at once → a judge pause → human decision; the
//! errors that leave a run untouched; history, listing, project isolation, the diagram overlay; cancel during a
//! running script and retry after a failed one.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::runs_support::*;
use crate::support::*;

const REVIEW: &str = r#"name: review
description: Check, judge, ask
initial: check
inputs:
  who: { type: string, default: "o'brien" }
nodes:
  check:
    type: script
    label: Check
    config: { command: "printf '%s' {{ input.who }}" }
    transitions: { success: route, failure: $fail }
  route:
    type: condition
    config: { expression: "check.exitCode == 0" }
    transitions: { "true": judge, "false": $fail }
  judge:
    type: ai_judge
    label: Judge it
    config: { prompt: "Is {{ check.stdout }} fine?" }
    transitions: { approve: ask, reject: $fail }
  ask:
    type: human
    label: Ship?
    config: { prompt: "Ship it for {{ check.stdout }}?", labels: { ship: Ship now, stop: Stop } }
    transitions: { ship: $end, stop: $fail }
"#;

#[tokio::test]
async fn a_run_goes_from_scripts_to_a_judge_to_a_human_and_completes() {
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(&repo, "review", REVIEW);
    let client = env.connect().await;
    let cwd = s(&repo);

    let started = client.ok("start_workflow", json!({ "cwd": cwd, "id": "review" })).await;
    assert_eq!(started["status"], "paused", "{started}");
    let run_id = started["runId"].as_str().unwrap().to_owned();
    assert!(run_id.chars().all(|c| c.is_ascii_alphanumeric()) && run_id.len() == 26, "{run_id}");
    let url = started["url"].as_str().unwrap();
    assert!(url.ends_with(&format!("/open/runs/{run_id}?project={}", project_id(&client, &cwd).await)), "{url}");
    assert_eq!(started["workflow"], json!({ "id": "review", "name": "review", "description": "Check, judge, ask" }));
    assert!(started["narration"].as_str().unwrap().contains(url));
    let note = started["urlNote"].as_str().unwrap_or_default();
    assert!(note.contains("No `cairn serve` is running") && note.contains("start one with `cairn serve`"), "no server: the result says how to open the link: {started}");
    assert_eq!(pending(&started, "nodeType"), "ai_judge");
    assert_eq!(pending(&started, "runId"), run_id);
    assert!(pending(&started, "prompt").starts_with("Is o'brien fine?"), "the quoted value reached the script as one word");
    assert_eq!(started["pendingStep"]["validTransitions"], json!(["approve", "reject"]));
    assert_eq!(started["billingMode"], "none");

    // A human-only tool on an AI step, and a response for a node that is not pending, change nothing.
    let wrong = client.ok("resume_run", json!({ "cwd": cwd, "run_id": run_id, "transition": "ship" })).await;
    assert_eq!(wrong["code"], "wrong_tool", "{wrong}");
    let stale = client
        .ok("advance_run", json!({ "cwd": cwd, "run_id": run_id, "node_id": "ask", "response": "x" }))
        .await;
    assert_eq!(stale["code"], "stale_step", "{stale}");

    // An invalid envelope keeps the same step, with a correction note.
    let invalid = client.ok("advance_run", json!({ "cwd": cwd, "run_id": run_id, "response": "looks fine" })).await;
    assert_eq!(invalid["code"], "invalid_response", "{invalid}");
    assert_eq!(invalid["status"], "paused");
    assert_eq!(pending(&invalid, "nodeId"), "judge");
    // Brief answers: the note came once this session; the AdvanceResult's seed fields all stay.
    assert!(invalid.get("urlNote").is_none(), "urlNote once per session: {invalid}");
    for field in ["runId", "status", "url", "totalCostUsd", "meteredCostUsd", "subscriptionEquivCostUsd", "billingMode",
        "inputTokens", "outputTokens"] {
        assert!(invalid.get(field).is_some(), "{field}: {invalid}");
    }
    for field in ["runId", "nodeId", "nodeType", "prompt", "validTransitions"] {
        assert!(invalid["pendingStep"].get(field).is_some(), "{field}: {invalid}");
    }
    assert!(invalid["pendingStep"].get("transitions").is_none(), "validTransitions say it: {invalid}");
    assert_eq!(invalid["pendingStep"]["attempt"], 1);

    let judged = client
        .ok(
            "advance_run",
            json!({ "cwd": cwd, "run_id": run_id, "node_id": "judge",
                    "response": "```json\n{\"reasoning\": \"ok\", \"verdict\": \"approve\"}\n```" }),
        )
        .await;
    assert_eq!(pending(&judged, "nodeType"), "human", "{judged}");
    assert!(pending(&judged, "prompt").contains("1. ship — Ship now"));
    let labels: Vec<&Value> = judged["pendingStep"]["transitions"].as_array().unwrap().iter().map(|t| &t["label"]).collect();
    assert_eq!(labels, [&json!("Ship now"), &json!("Stop")], "each choice carries its label: {judged}");
    assert_eq!(judged["billingMode"], "subscription");
    assert!(judged["inputTokens"].as_i64().unwrap() > 0);

    let wrong = client.ok("advance_run", json!({ "cwd": cwd, "run_id": run_id, "response": "ship" })).await;
    assert_eq!(wrong["code"], "wrong_tool");
    assert!(wrong["error"].as_str().unwrap().contains("resume_run"));
    let invalid = client.ok("resume_run", json!({ "cwd": cwd, "run_id": run_id, "transition": "maybe" })).await;
    assert_eq!(invalid["code"], "invalid_transition");
    assert_eq!(invalid["validTransitions"], json!(["ship", "stop"]));
    let status = client.ok("get_run_status", json!({ "cwd": cwd, "run_id": run_id })).await;
    assert_eq!(pending(&status, "nodeId"), "ask", "nothing moved");

    let done = client
        .ok("resume_run", json!({ "cwd": cwd, "run_id": run_id, "transition": "Ship", "comment": "go" }))
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["output"], json!({ "choice": "ship", "comment": "go", "decidedBy": "mcp", "principal": "local person" }));
    assert!(done.get("pendingStep").is_none());
    let late = client.ok("advance_run", json!({ "cwd": cwd, "run_id": run_id, "response": "x" })).await;
    assert_eq!(late["code"], "terminal");
    let again = client.ok("cancel_run", json!({ "cwd": cwd, "run_id": run_id })).await;
    assert_eq!((again["code"].as_str(), again["error"].as_str()), (Some("terminal"), Some("Run is already completed.")));

    let history = client.ok("get_run_history", json!({ "cwd": cwd, "run_id": run_id })).await;
    let nodes: Vec<(&str, &str)> = history["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["nodeId"].as_str().unwrap(), n["status"].as_str().unwrap()))
        .collect();
    assert_eq!(nodes, [("check", "completed"), ("route", "completed"), ("judge", "completed"), ("ask", "completed")]);
    assert_eq!(history["nodes"][0]["output"]["stdout"], "o'brien");
    assert_eq!(history["nodes"][2]["attempts"], 2);
    assert_eq!(history["nodes"][2]["output"]["verdict"], "approve");
    assert_eq!(history["run"]["childRunIds"], json!([]));
    assert!(history["run"]["context"].get("nodes").is_none(), "brief: the outputs once, on the nodes: {history}");
    assert!(history["nodes"][0].get("cost").is_none() && history["run"].get("budget").is_none(), "{history}");
    let full = client.ok("get_run_history", json!({ "cwd": cwd, "run_id": run_id, "detail": "full" })).await;
    assert_eq!(full["run"]["context"]["nodes"]["judge"]["verdict"], "approve");
    assert!(full["nodes"][0]["cost"].is_object() && full["run"]["budget"].is_null(), "{full}");

    let list = client.ok("list_runs", json!({ "cwd": cwd })).await;
    assert_eq!(list[0]["id"], run_id.as_str());
    assert_eq!(list[0]["status"], "completed");
    assert_eq!(list[0]["source"], "mcp");
    assert_eq!(list[0]["workflowSource"], "repo");
    assert_eq!(list[0]["kind"], "user");

    let diagram = client.ok("get_workflow_diagram", json!({ "cwd": cwd, "run_id": run_id })).await;
    let statuses: Vec<&str> = diagram["nodes"].as_array().unwrap().iter().map(|n| n["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["completed"; 4]);
    assert!(diagram["mermaid"].as_str().unwrap().contains("completed"));
    client.close().await;
}

/// The projectId the server derived for `cwd`, read back from a run's URL.
async fn project_id(client: &Client, cwd: &str) -> String {
    let list = client.ok("list_runs", json!({ "cwd": cwd })).await;
    let id = list[0]["id"].as_str().unwrap();
    let status = client.ok("get_run_status", json!({ "cwd": cwd, "run_id": id })).await;
    status["url"].as_str().unwrap().rsplit("project=").next().unwrap().to_owned()
}

#[tokio::test]
async fn runs_are_invisible_to_other_projects_and_to_global_callers() {
    let env = Env::new();
    let alpha = env.repo("alpha");
    let beta = env.repo("beta");
    let wait = "name: wait\ninitial: a\nnodes:\n  a: { type: ai_agent, config: { prompt: go } }\n";
    write_workflow(&alpha, "wait", wait);
    std::fs::create_dir_all(env.global_dir()).unwrap();
    std::fs::write(env.global_dir().join("wait.yaml"), wait).unwrap();
    let client = env.connect().await;
    let run = client.ok("start_workflow", json!({ "cwd": s(&alpha), "id": "wait" })).await;
    let id = run["runId"].as_str().unwrap();
    let global = client.ok("start_workflow", json!({ "global": true, "id": "wait" })).await;
    assert!(global["url"].as_str().unwrap().ends_with("?project=global"));
    let global_id = global["runId"].as_str().unwrap();

    for (scope, other) in [(json!({ "cwd": s(&beta) }), id), (json!({ "global": true }), id), (json!({ "cwd": s(&alpha) }), global_id)] {
        for tool in ["get_run_status", "get_run_history", "cancel_run", "retry_run"] {
            let mut args = scope.clone();
            args["run_id"] = json!(other);
            let body = client.ok(tool, args).await;
            assert_eq!(body["error"], "Run not found.", "{tool}: {body}");
        }
        let mut args = scope.clone();
        args["run_id"] = json!(other);
        args["response"] = json!("x");
        assert_eq!(client.ok("advance_run", args).await["error"], "Run not found.");
    }
    assert_eq!(client.ok("list_runs", json!({ "cwd": s(&beta) })).await, json!([]));
    let mine = client.ok("list_runs", json!({ "cwd": s(&alpha) })).await;
    assert_eq!(mine.as_array().unwrap().len(), 1);
    let globals = client.ok("list_runs", json!({ "global": true })).await;
    assert_eq!(globals[0]["id"], global_id);
    let bad = client.ok("list_runs", json!({ "global": true, "status": "weird" })).await;
    assert_eq!(bad["code"], "invalid_input");
    let missing = client.ok("start_workflow", json!({ "global": true, "id": "nope" })).await;
    assert_eq!(missing["code"], "not_found");
    let scope = client.fail("get_run_status", json!({ "run_id": id })).await;
    assert_eq!(scope["code"], "CWD_REQUIRED");
    client.close().await;
}

#[tokio::test]
async fn inputs_are_validated_before_a_run_exists() {
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(
        &repo,
        "typed",
        "name: typed\ninitial: a\ninputs:\n  n: { type: integer, required: true }\nnodes:\n  a: { type: ai_agent, config: { prompt: '{{ input.n }}' } }\n",
    );
    let client = env.connect().await;
    let cwd = s(&repo);
    let bad = client.ok("start_workflow", json!({ "cwd": cwd, "id": "typed", "input": { "n": "two" } })).await;
    assert_eq!(bad["code"], "invalid_input", "{bad}");
    assert!(bad["error"].as_str().unwrap().contains("type integer"));
    assert_eq!(client.ok("list_runs", json!({ "cwd": cwd })).await, json!([]));
    let ok = client.ok("start_workflow", json!({ "cwd": cwd, "id": "typed", "input": { "n": 2 } })).await;
    assert_eq!(pending(&ok, "prompt"), "2");
    client.close().await;
}

#[tokio::test]
async fn cancel_kills_a_running_script_and_retry_reruns_a_failed_one() {
    let env = Env::new();
    let repo = env.repo("proj");
    let marker = repo.join("pid");
    write_workflow(
        &repo,
        "slow",
        &format!(
            "name: slow\ninitial: wait\nnodes:\n  wait:\n    type: script\n    config: {{ command: \"echo $$ > {} && exec sleep 300\" }}\n    transitions: {{ success: $end }}\n",
            marker.display()
        ),
    );
    let client = Arc::new(env.connect().await);
    let cwd = s(&repo);
    let starter = {
        let (client, cwd) = (client.clone(), cwd.clone());
        tokio::spawn(async move { client.ok("start_workflow", json!({ "cwd": cwd, "id": "slow" })).await })
    };
    let pid: u32 = eventually("the script to start", || {
        std::fs::read_to_string(&marker).ok().and_then(|t| t.trim().parse().ok())
    })
    .await;
    assert!(alive(pid));
    let list = client.ok("list_runs", json!({ "cwd": cwd, "status": "running" })).await;
    let run_id = list[0]["id"].as_str().unwrap().to_owned();
    let cancelled = client.ok("cancel_run", json!({ "cwd": cwd, "run_id": run_id, "reason": "too slow" })).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["error"], "too slow");
    eventually("the script to be killed", || (!alive(pid)).then_some(())).await;
    let started: Value = starter.await.unwrap();
    assert_eq!(started["status"], "cancelled", "{started}");
    let history = client.ok("get_run_history", json!({ "cwd": cwd, "run_id": run_id })).await;
    assert_eq!(history["nodes"][0]["status"], "cancelled");
    let again = client.ok("cancel_run", json!({ "cwd": cwd, "run_id": run_id })).await;
    assert_eq!(again["code"], "terminal");

    // A script that fails until a file exists: retry continues from it, keeping the earlier output.
    let flag = repo.join("ready");
    write_workflow(
        &repo,
        "flaky",
        &format!(
            "name: flaky\ninitial: ask\nnodes:\n  ask:\n    type: ai_agent\n    config: {{ prompt: go }}\n    transitions: {{ success: build }}\n  build:\n    type: script\n    config: {{ command: \"test -f {}\" }}\n    transitions: {{ success: $end }}\n",
            flag.display()
        ),
    );
    let run = client.ok("start_workflow", json!({ "cwd": cwd, "id": "flaky" })).await;
    let run_id = run["runId"].as_str().unwrap();
    let failed = client.ok("advance_run", json!({ "cwd": cwd, "run_id": run_id, "response": "done" })).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["errorCode"], "node_failed");
    std::fs::write(&flag, "").unwrap();
    let retried = client.ok("retry_run", json!({ "cwd": cwd, "run_id": run_id })).await;
    assert_eq!(retried["status"], "completed", "{retried}");
    let history = client.ok("get_run_history", json!({ "cwd": cwd, "run_id": run_id })).await;
    let trace: Vec<(&str, &str)> = history["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["nodeId"].as_str().unwrap(), n["status"].as_str().unwrap()))
        .collect();
    assert_eq!(trace, [("ask", "completed"), ("build", "failed"), ("build", "completed")]);
    assert_eq!(history["run"]["attempt"], 2);
    let not_failed = client.ok("retry_run", json!({ "cwd": cwd, "run_id": run_id })).await;
    assert_eq!(not_failed["code"], "not_retryable");
    Arc::try_unwrap(client).ok().unwrap().close().await;
}

#[tokio::test]
async fn a_run_started_over_http_is_answered_by_a_stdio_server_on_the_same_database() {
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(&repo, "review", REVIEW);
    let cwd = s(&repo);
    let http = env.connect_over(Transport::Http).await;
    let started = http.ok("start_workflow", json!({ "cwd": cwd, "id": "review" })).await;
    assert_eq!(pending(&started, "nodeType"), "ai_judge", "{started}");
    let run_id = started["runId"].as_str().unwrap();

    let stdio = env.connect().await;
    let judged = stdio
        .ok("advance_run", json!({ "cwd": cwd, "run_id": run_id, "response": r#"{"verdict": "approve"}"# }))
        .await;
    assert_eq!(pending(&judged, "nodeType"), "human");
    let status = http.ok("get_run_status", json!({ "cwd": cwd, "run_id": run_id })).await;
    assert_eq!(status["pendingStep"], judged["pendingStep"]);
    let done = http.ok("resume_run", json!({ "cwd": cwd, "run_id": run_id, "transition": "1" })).await;
    assert_eq!(done["status"], "completed", "{done}");
    stdio.close().await;
    http.close().await;
}

#[tokio::test]
async fn an_unanswered_human_step_takes_its_timeout_route_when_next_looked_at() {
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(
        &repo,
        "ask",
        "name: ask\ninitial: ask\nnodes:\n  ask:\n    type: human\n    timeoutMs: 1\n    config: { prompt: go? }\n    transitions: { go: $fail, timeout: $end }\n",
    );
    let client = env.connect().await;
    let cwd = s(&repo);
    let started = client.ok("start_workflow", json!({ "cwd": cwd, "id": "ask" })).await;
    assert_eq!(started["pendingStep"]["validTransitions"], json!(["go"]));
    let run_id = started["runId"].as_str().unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let status = client.ok("get_run_status", json!({ "cwd": cwd, "run_id": run_id })).await;
    assert_eq!(status["status"], "completed", "{status}");
    assert_eq!(status["output"], json!({ "timedOut": true }));
    client.close().await;
}

#[tokio::test]
async fn scripts_get_the_roscoe_environment_their_bundle_and_a_time_limit() {
    let env = Env::new();
    let repo = env.repo("proj");
    let bundle = repo.join(".roscoe/workflows/tools/scripts");
    std::fs::create_dir_all(&bundle).unwrap();
    std::fs::write(bundle.join("hello.sh"), "printf 'hello %s' \"$1\"\n").unwrap();
    write_workflow(
        &repo,
        "tools",
        r#"name: tools
initial: envs
nodes:
  envs:
    type: script
    config:
      command: "printf '%s|%s|%s|' \"$ROSCOE_WORKFLOW_DIR\" \"$ROSCOE_NODE_ID\" \"$GREETING\" && cat \"$ROSCOE_CONTEXT_FILE\""
      env: { GREETING: "hi {{ input.name }}" }
    transitions: { success: bundled }
  bundled:
    type: script
    config: { script: scripts/hello.sh, interpreter: sh, args: ["{{ input.name }}"] }
    transitions: { success: slow }
  slow:
    type: script
    config: { command: "sleep 30", timeoutMs: 200 }
    transitions: { success: $end, failure: $fail }
"#,
    );
    let client = env.connect().await;
    let cwd = s(&repo);
    let done = client.ok("start_workflow", json!({ "cwd": cwd, "id": "tools", "input": { "name": "ann" } })).await;
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(done["errorCode"], "routed_to_fail");
    let history = client.ok("get_run_history", json!({ "cwd": cwd, "run_id": done["runId"] })).await;
    let stdout = history["nodes"][0]["output"]["stdout"].as_str().unwrap();
    let dir = s(&repo.join(".roscoe/workflows/tools"));
    assert!(stdout.starts_with(&format!("{dir}|envs|hi ann|")), "{stdout}");
    let context: serde_json::Value = serde_json::from_str(stdout.splitn(4, '|').nth(3).unwrap()).unwrap();
    assert_eq!(context["input"]["name"], "ann");
    assert_eq!(history["nodes"][1]["output"]["stdout"], "hello ann");
    assert_eq!(history["nodes"][2]["output"]["timedOut"], true);
    assert!(history["nodes"][2]["error"].as_str().unwrap().contains("time limit"));
    client.close().await;
}
