//! Runs started from the REST API have their AI steps answered by the server through its providers: every AI node
//! type runs to the end against the Anthropic stand-in, each call charged at usage × price; consensus agents are
//! called at once; an OpenAI-compatible server serves the models routed to it; without a provider the step is
//! handed back to a host.

use std::time::Duration;

use serde_json::json;

use super::anthropic::{Answer, Request, StandIn, Usage};
use super::openai::OpenAiStandIn;
use super::support::{anthropic_env, node, start};

/// Every AI node type in one workflow: agent, judge, a 3-agent consensus gate, a round robin of three and a map.
const ALL: &str = r#"name: all
defaults: { model: claude-sonnet-4-5 }
initial: draft
nodes:
  draft:
    type: ai_agent
    config: { prompt: "Write a haiku" }
    transitions: { success: check }
  check:
    type: ai_judge
    config: { prompt: "Is this good? {{ draft.text }}", choices: [approve, reject] }
    transitions: { approve: vote, reject: $fail }
  vote:
    type: consensus
    config: { mode: gate, agentCount: 3, quorum: 2, prompt: "Ship it?", choices: [approve, reject] }
    transitions: { approve: pick, reject: $fail, no_consensus: $fail }
  pick:
    type: round_robin
    config: { candidates: [red, green, blue], criterion: brightest }
    transitions: { success: each }
  each:
    type: map
    config: { items: "a and b", prompt: "review {{ item }}", reduce: { prompt: "merge {{ results }}" } }
    transitions: { success: $end, failure: $fail }
"#;

/// The usage every stand-in answer reports.
const USAGE: Usage = Usage { input: 100, output: 20, cache_read: 10, cache_creation: 5 };

/// What the scripted model answers: verdicts for matchups and judges, lists for extracts, text otherwise; the
/// consensus agents slowly, so that they overlap.
fn scripted(request: &Request) -> Answer {
    let prompt = request.first_user_text();
    let answer = if prompt.contains("Candidate A:") {
        Answer::text(r#"{"winner": "A", "margin": 80, "reasoning": "brighter"}"#)
    } else if prompt.contains("JSON array") {
        Answer::text(r#"["a", "b"]"#)
    } else if prompt.contains("\"verdict\"") {
        Answer::text(r#"{"reasoning": "fine", "verdict": "approve"}"#)
    } else {
        Answer::text(format!("answer to: {}", prompt.lines().next().unwrap_or_default()))
    };
    let delay = if prompt.starts_with("Ship it?") { Duration::from_millis(300) } else { Duration::ZERO };
    answer.with_usage(USAGE).after(delay)
}

/// USD of one call with [`USAGE`] at claude-sonnet-4-5's built-in prices (3 / 15, cache writes 3.75, reads 0.30).
fn call_usd() -> f64 {
    (100.0 * 3.0 + 10.0 * 0.30 + 5.0 * 3.75 + 20.0 * 15.0) / 1e6
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[tokio::test]
async fn every_ai_node_type_runs_on_the_server_from_rest_with_costs_from_reported_usage() {
    let model = StandIn::start(scripted).await;
    let vars = anthropic_env(&model.base);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let env = start(&[("all", ALL)], "", &vars).await;

    let started = env.start_run("all", json!({})).await;
    let run_id = started["runId"].as_str().unwrap();
    let history = env.stopped(run_id).await;
    assert_eq!(history["run"]["status"], "completed", "{history}");
    assert_eq!(history["run"]["execution"], "server");

    // 1 agent + 1 judge + 3 consensus agents + 3 matchups + extract, 2 branches, reduce.
    let requests = model.requests();
    assert_eq!(requests.len(), 12, "{requests:?}");
    assert!(requests.iter().all(|r| r["model"] == "claude-sonnet-4-5" && r["max_tokens"].is_u64()));
    assert!(model.most_at_once() >= 3, "the three consensus agents were called at once: {}", model.most_at_once());

    let cost = &history["run"]["cost"];
    assert_eq!(cost["billingMode"], "metered", "{cost}");
    assert!(close(cost["meteredCostUsd"].as_f64().unwrap(), 12.0 * call_usd()), "{cost}");
    assert_eq!(cost["subscriptionEquivCostUsd"], 0.0);
    assert_eq!(cost["inputTokens"], 12 * 115, "input counts cache reads and writes: {cost}");
    assert_eq!(cost["outputTokens"], 12 * 20);
    assert_eq!((cost["cacheReadTokens"].as_i64(), cost["cacheCreationTokens"].as_i64()), (Some(120), Some(60)));

    let calls_of = |id: &str| node(&history, id)["calls"].as_array().unwrap().len();
    let per_node: Vec<usize> = ["draft", "check", "vote", "pick", "each"].into_iter().map(calls_of).collect();
    assert_eq!(per_node, [1, 1, 3, 3, 4]);
    let vote = node(&history, "vote");
    assert!(close(vote["cost"]["meteredCostUsd"].as_f64().unwrap(), 3.0 * call_usd()), "{vote}");
    assert!(close(vote["costUsd"].as_f64().unwrap(), 3.0 * call_usd()));
    let call = &vote["calls"][0];
    assert_eq!((call["model"].as_str(), call["provider"].as_str(), call["billing"].as_str()),
        (Some("claude-sonnet-4-5"), Some("anthropic"), Some("metered")));
    assert!(call["latencyMs"].as_i64().unwrap() >= 300, "the stand-in took 300 ms: {call}");
    assert_eq!(node(&history, "check")["output"]["verdict"], "approve");
    assert_eq!(node(&history, "pick")["output"]["winner"], "red", "{history}");
    assert!(!history.to_string().contains("sk-test-not-a-real-key"), "the key is never in a run's history");

    // The page shows each node's model, tokens, cost and latency, and the run's total.
    let page = reqwest::get(env.served.url(&format!("/runs/{run_id}?project=global"))).await.unwrap().text().await.unwrap();
    // Shown as the pages show money: 4 decimals under a cent, else 2.
    let total = 12.0 * call_usd();
    let shown = if total < 0.01 { format!("${total:.4}") } else { format!("${total:.2}") };
    assert!(page.contains(&shown), "the run's total {shown}");
    assert!(page.contains("claude-sonnet-4-5 · 3 call(s) · 345 in / 60 out tokens"), "the vote's calls");

    // /metrics counts the calls, their tokens and their cost.
    let metrics = reqwest::get(env.served.url("/metrics")).await.unwrap().text().await.unwrap();
    let sample = |name: &str, labels: &[&str]| {
        metrics
            .lines()
            .find(|l| l.starts_with(&format!("{name}{{")) && labels.iter().all(|label| l.contains(label)))
            .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("no {name} {labels:?} in:\n{metrics}"))
    };
    let model = r#"model="claude-sonnet-4-5""#;
    assert_eq!(sample("cairn_model_calls_total", &[model, r#"outcome="ok""#]), 12.0, "{metrics}");
    assert_eq!(sample("cairn_model_tokens_total", &[model, r#"kind="output""#]), 12.0 * 20.0);
    assert_eq!(sample("cairn_model_cost_microdollars_total", &[model]), 12.0 * (call_usd() * 1e6).round(), "each call counted in whole millionths");
}

#[tokio::test]
async fn models_routed_to_an_openai_compatible_server_are_served_there_with_their_keys_and_prices() {
    let local = OpenAiStandIn::start(|prompt| (format!("local says: {prompt}"), 40, 7)).await;
    let keys = tempfile::tempdir().unwrap();
    let key_file = keys.path().join("key");
    std::fs::write(&key_file, "filed-secret\n").unwrap();
    let yaml = format!(
        "models:\n  providers: {{ llama3: local, \"qwen*\": filed }}\nproviders:\n  local: {{ type: openai, baseUrl: \"{0}\", \
         apiKeyEnv: LOCAL_KEY }}\n  filed: {{ type: openai, baseUrl: \"{0}\", apiKeyFile: \"{1}\" }}\n\
         pricing:\n  llama3: {{ input: 1.0, output: 2.0 }}\n",
        local.base,
        key_file.display()
    );
    let workflow = "name: ask\ninitial: ask\nnodes:\n  ask:\n    type: ai_agent\n    config: { prompt: \"hello\", model: llama3 }\n    \
                    transitions: { success: other }\n  other:\n    type: ai_agent\n    config: { prompt: \"again\", model: qwen2 }\n    \
                    transitions: { success: $end }\n";
    let env = start(&[("ask", workflow)], &yaml, &[("LOCAL_KEY", "local-secret")]).await;

    let run_id = env.start_run("ask", json!({})).await["runId"].as_str().unwrap().to_owned();
    let history = env.stopped(&run_id).await;
    assert_eq!(history["run"]["status"], "completed", "{history}");
    assert_eq!(node(&history, "ask")["output"]["text"], "local says: hello");
    let requests = local.requests();
    let seen: Vec<(&str, Option<&str>)> = requests.iter().map(|(body, auth)| (body["model"].as_str().unwrap(), auth.as_deref())).collect();
    assert_eq!(seen, [("llama3", Some("Bearer local-secret")), ("qwen2", Some("Bearer filed-secret"))]);
    let cost = &node(&history, "ask")["cost"];
    assert!(close(cost["meteredCostUsd"].as_f64().unwrap(), (40.0 * 1.0 + 7.0 * 2.0) / 1e6), "{cost}");
    let other = &node(&history, "other")["cost"];
    assert_eq!((other["unpricedCalls"].as_i64(), other["inputTokens"].as_i64()), (Some(1), Some(40)), "no price: {other}");
    assert!(!history.to_string().contains("secret"), "no key in the run's history");
}

#[tokio::test]
async fn concurrency_per_run_bounds_the_calls_made_at_once() {
    let vote = r#"{"reasoning": "fine", "verdict": "go"}"#;
    let model = StandIn::start(move |_: &Request| Answer::text(vote).after(Duration::from_millis(100))).await;
    let vars = anthropic_env(&model.base);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let workflow = "name: vote\ninitial: vote\nnodes:\n  vote:\n    type: consensus\n    config: { mode: gate, agentCount: 3, \
                    quorum: 2, prompt: \"Go?\", choices: [go, stop] }\n    transitions: { go: $end, stop: $fail, no_consensus: $fail }\n";
    let env = start(&[("vote", workflow)], "calls: { concurrencyPerRun: 1 }\n", &vars).await;
    let run_id = env.start_run("vote", json!({})).await["runId"].as_str().unwrap().to_owned();
    let history = env.stopped(&run_id).await;
    assert_eq!(history["run"]["status"], "completed", "{history}");
    assert_eq!(model.requests().len(), 3);
    assert_eq!(model.most_at_once(), 1, "one call of the run at a time");
}

#[tokio::test]
async fn without_a_provider_the_step_is_handed_back_saying_why() {
    let workflow = "name: ask\ninitial: ask\nnodes:\n  ask:\n    type: ai_agent\n    config: { prompt: \"hello\", model: nowhere-1 }\n    transitions: { success: $end }\n";
    let env = start(&[("ask", workflow)], "", &[]).await;
    let started = env.start_run("ask", json!({})).await;
    assert_eq!(started["status"], "paused", "{started}");
    let why = started["pendingStep"]["handedBack"].as_str().unwrap();
    assert!(why.contains("no model provider serves model 'nowhere-1'") && why.contains("models.providers"), "{why}");
    let run_id = started["runId"].as_str().unwrap();
    let history = env.get(&format!("/api/runs/{run_id}?project=global")).await;
    assert_eq!(history["run"]["status"], "paused", "{history}");
    assert_eq!(history["run"]["cost"]["billingMode"], "none", "nothing was called: {history}");
}

#[tokio::test]
async fn the_anthropic_provider_reads_a_streamed_answer_and_its_usage() {
    let model = StandIn::start(|_: &Request| Answer::text("streamed").with_usage(USAGE)).await;
    let vars = anthropic_env(&model.base);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let workflow = "name: ask\ninitial: ask\nnodes:\n  ask:\n    type: ai_agent\n    config: { prompt: \"hello\" }\n    transitions: { success: $end }\n";
    let env = start(&[("ask", workflow)], "providers:\n  anthropic: { stream: true }\n", &vars).await;

    let run_id = env.start_run("ask", json!({})).await["runId"].as_str().unwrap().to_owned();
    let history = env.stopped(&run_id).await;
    assert_eq!(history["run"]["status"], "completed", "{history}");
    assert_eq!(model.requests()[0]["stream"], true);
    let ask = node(&history, "ask");
    assert_eq!(ask["output"]["text"], "streamed");
    assert_eq!((ask["cost"]["inputTokens"].as_i64(), ask["cost"]["outputTokens"].as_i64()), (Some(115), Some(20)), "{ask}");
    assert!(close(ask["cost"]["meteredCostUsd"].as_f64().unwrap(), call_usd()), "{ask}");
}
