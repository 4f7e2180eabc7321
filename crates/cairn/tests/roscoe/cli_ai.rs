//! `roscoe run` of a workflow whose AI step the command runs itself, through the Anthropic provider pointed at the
//! local stand-in: script, condition, ai_agent and human nodes; the human step left paused (exit 3) and answered with
//! `roscoe runs resume`; the cost of the call from its reported usage; `--budget-usd` pausing before a call that
//! could pass it.

use std::path::Path;

use serde_json::Value;

use crate::anthropic::{Answer, Request, StandIn, Usage};
use crate::cli_support::Ran;
use crate::runs_support::write_workflow;
use crate::support::Env;

const PIPELINE: &str = "name: pipeline\ninitial: build\nnodes:\n  build:\n    type: script\n    config: { command: \"echo '{\\\"tests\\\": 3}'\" }\n    transitions: { success: check, failure: $fail }\n  check:\n    type: condition\n    config: { expression: \"build.json.tests > 2\" }\n    transitions: { \"true\": notes, \"false\": $fail }\n  notes:\n    type: ai_agent\n    config: { prompt: \"Write release notes for {{ build.json.tests }} passing tests\", model: claude-sonnet-4-5 }\n    transitions: { success: review }\n  review:\n    type: human\n    config: { prompt: \"Publish these notes?\", labels: { approve: \"Publish\", reject: \"Drop\" } }\n    transitions: { approve: $end, reject: $fail }\n";

/// `roscoe <args>` in `dir`, the Anthropic provider at `model`.
async fn roscoe(env: &Env, model: &StandIn, dir: &Path, args: &[&str]) -> Ran {
    let mut command = env.cli(env!("CARGO_BIN_EXE_roscoe"), args);
    command
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .env("ANTHROPIC_BASE_URL", &model.base)
        .env("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
        .env_remove("OPENAI_API_KEY");
    Ran::of(command).await
}

#[tokio::test]
async fn roscoe_run_calls_the_model_itself_then_waits_for_a_person_and_runs_resume_finishes() {
    let model = StandIn::start(|request: &Request| {
        Answer::text(format!("Notes: {}", request.first_user_text())).with_usage(Usage::plain(120, 30))
    })
    .await;
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "pipeline", PIPELINE);

    let paused = roscoe(&env, &model, &repo, &["run", "pipeline", "--json"]).await;
    assert_eq!(paused.code, 3, "waits for a person: {paused:?}");
    let result = paused.json();
    let run_id = result["runId"].as_str().unwrap().to_owned();
    assert_eq!(result["pendingStep"]["nodeId"], "review", "{result}");
    let requests = model.requests();
    assert_eq!(requests.len(), 1, "one model call, made by the command");
    assert!(requests[0].to_string().contains("Write release notes for 3 passing tests"), "{}", requests[0]);
    assert!(paused.stderr.contains("notes") && paused.stderr.contains("120/30 tok"), "progress shows the call's tokens: {}", paused.stderr);

    let done = roscoe(&env, &model, &repo, &["runs", "resume", &run_id, "approve", "--json"]).await;
    assert_eq!(done.code, 0, "{done:?}");
    assert_eq!(done.json()["status"], "completed");
    let history = roscoe(&env, &model, &repo, &["runs", "history", &run_id, "--json"]).await.json();
    let notes = node(&history, "notes");
    assert_eq!(notes["output"]["text"].as_str().map(str::trim), Some("Notes: Write release notes for 3 passing tests"), "{notes}");
    // claude-sonnet-4-5's built-in prices: 3 USD per million input tokens, 15 per million output.
    let usd = notes["cost"]["meteredCostUsd"].as_f64().expect("a metered cost");
    assert!((usd - (120.0 * 3.0 + 30.0 * 15.0) / 1e6).abs() < 1e-9, "{notes}");
}

#[tokio::test]
async fn budget_usd_pauses_the_run_before_a_call_that_could_pass_it() {
    let model = StandIn::start(|_: &Request| Answer::text("notes").with_usage(Usage::plain(120, 30))).await;
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "pipeline", PIPELINE);

    let paused = roscoe(&env, &model, &repo, &["run", "pipeline", "--budget-usd", "0", "--json"]).await;
    assert_eq!(paused.code, 3, "{paused:?}");
    let result = paused.json();
    assert_eq!(result["pendingStep"]["budgetExceeded"]["code"], "budget_exceeded", "paused on its budget: {result}");
    assert!(paused.stderr.contains("is paused on its budget before step 'notes'"), "{}", paused.stderr);
    assert!(model.requests().is_empty(), "no call made past the budget");
    let bad = roscoe(&env, &model, &repo, &["run", "pipeline", "--budget-usd", "lots"]).await;
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(bad.stderr.contains("is not an amount of USD"), "{}", bad.stderr);
}

/// The history entry of node `id`.
fn node<'h>(history: &'h Value, id: &str) -> &'h Value {
    history["nodes"].as_array().unwrap().iter().find(|n| n["nodeId"] == id).unwrap_or_else(|| panic!("no node {id}: {history}"))
}
