//! Budgets: before each call the server reserves its worst case (prompt bytes + 64 framing tokens in, `maxTokens`
//! out); a looping workflow pauses exactly before the call that could cross its budget, never spends past it, and
//! continues when the budget is raised. A cost that cannot be known never counts as zero.

use serde_json::json;

use super::anthropic::{Answer, Request, StandIn, Usage};
use super::support::{anthropic_env, start};

/// An agent that loops on itself, with a workflow budget of 200 tokens.
const LOOP: &str = "name: loop\nbudget: { tokens: 200 }\ninitial: work\nnodes:\n  work:\n    type: ai_agent\n    \
    maxIterations: 50\n    config: { prompt: \"go\" }\n    transitions: { success: work, max_iterations: $end }\n";

/// The provider asks for at most 100 output tokens: a call's worst case is 2 + 64 + 100 = 166 tokens.
const ROSCOE: &str = "providers:\n  anthropic: { maxTokens: 100 }\n";

#[tokio::test]
async fn a_looping_run_pauses_before_the_call_that_could_cross_its_budget_and_goes_on_when_it_is_raised() {
    let model = StandIn::start(|_: &Request| Answer::text("done").with_usage(Usage::plain(10, 20))).await;
    let vars = anthropic_env(&model.base);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let env = start(&[("loop", LOOP)], ROSCOE, &vars).await;

    let run_id = env.start_run("loop", json!({})).await["runId"].as_str().unwrap().to_owned();
    let history = env.stopped(&run_id).await;
    // 0 + 166 ≤ 200 and 30 + 166 ≤ 200 are called; 60 + 166 > 200 is not.
    assert_eq!(history["run"]["status"], "paused", "{history}");
    assert_eq!(model.requests().len(), 2);
    let status = env.post(&format!("/api/runs/{run_id}/budget?project=global"), json!({ "tokens": 200 })).await.1;
    let hold = &status["pendingStep"]["budgetExceeded"];
    assert_eq!(hold["code"], "budget_exceeded", "{status}");
    assert_eq!((hold["spentTokens"].as_i64(), hold["nextTokens"].as_i64()), (Some(60), Some(166)), "{hold}");
    assert_eq!(hold["limit"]["tokens"], 200);
    assert_eq!(model.requests().len(), 2, "the same budget changes nothing");
    let page = reqwest::get(env.served.url(&format!("/runs/{run_id}?project=global"))).await.unwrap().text().await.unwrap();
    assert!(page.contains("id=\"raise-budget\"") && page.contains("60 tokens spent + up to 166 next &#62; limit 200"), "{page}");

    let (code, raised) = env.post(&format!("/api/runs/{run_id}/budget?project=global"), json!({ "tokens": 400 })).await;
    assert_eq!(code, 200, "{raised}");
    let history = env.stopped(&run_id).await;
    // 60 + 166 … 210 + 166 ≤ 400 are called (six more); 240 + 166 > 400 is not.
    assert_eq!(history["run"]["status"], "paused", "{history}");
    assert_eq!(model.requests().len(), 8);
    let cost = &history["run"]["cost"];
    assert_eq!(cost["inputTokens"].as_i64().unwrap() + cost["outputTokens"].as_i64().unwrap(), 240, "{cost}");
    let actions: Vec<&str> = history["actions"].as_array().unwrap().iter().filter_map(|a| a["action"].as_str()).collect();
    assert_eq!(actions, ["start", "budget", "budget"]);
}

#[tokio::test]
async fn a_start_budget_in_usd_pauses_a_call_whose_model_has_no_price_before_it_is_made() {
    let model = StandIn::start(|_: &Request| Answer::text("done")).await;
    let vars = anthropic_env(&model.base);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let workflow = "name: odd\ninitial: ask\nnodes:\n  ask:\n    type: ai_agent\n    config: { prompt: \"hi\", model: claude-unpriced-9 }\n    transitions: { success: $end }\n";
    let env = start(&[("odd", workflow)], "", &vars).await;

    let started = env.start_run("odd", json!({ "budget": { "usd": 5 } })).await;
    let history = env.stopped(started["runId"].as_str().unwrap()).await;
    assert_eq!(history["run"]["status"], "paused", "{history}");
    assert_eq!(history["run"]["budget"], json!({ "usd": 5.0 }));
    assert!(model.requests().is_empty(), "an unknown cost never counts as zero");
    let status = env.post(&format!("/api/runs/{}/budget?project=global", started["runId"].as_str().unwrap()), json!({ "usd": 5 })).await.1;
    let message = status["pendingStep"]["budgetExceeded"]["message"].as_str().unwrap();
    assert!(message.contains("cannot be bounded"), "{message}");
}
