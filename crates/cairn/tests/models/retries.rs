//! Rate limits, overload and server errors are retried with backoff, `Retry-After` honoured; a call that still fails
//! fails its node like a failed script, and `retry_run` runs the node again.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use super::anthropic::{Answer, Request, StandIn};
use super::support::{anthropic_env, node, start};

const ASK: &str = "name: ask\ninitial: ask\nnodes:\n  ask:\n    type: ai_agent\n    config: { prompt: \"hello\" }\n    transitions: { success: $end }\n";

/// Answers with `failures` in turn, then text.
fn failing_first(failures: Vec<Answer>) -> impl Fn(&Request) -> Answer {
    let seen = Arc::new(AtomicUsize::new(0));
    move |_: &Request| {
        let n = seen.fetch_add(1, Ordering::SeqCst);
        failures.get(n).cloned().unwrap_or_else(|| Answer::text("at last"))
    }
}

fn error(status: u16, kind: &'static str, retry_after: Option<u64>) -> Answer {
    Answer::Error { status, kind, retry_after }
}

#[tokio::test]
async fn rate_limits_overload_and_server_errors_are_retried_until_the_call_succeeds() {
    let model = StandIn::start(failing_first(vec![
        error(429, "rate_limit_error", Some(0)),
        error(529, "overloaded_error", None),
        error(500, "api_error", None),
    ]))
    .await;
    let vars = anthropic_env(&model.base);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let env = start(&[("ask", ASK)], "calls: { retries: 3, backoffMs: 10, maxBackoffMs: 100 }\n", &vars).await;

    let run_id = env.start_run("ask", json!({})).await["runId"].as_str().unwrap().to_owned();
    let history = env.stopped(&run_id).await;
    assert_eq!(history["run"]["status"], "completed", "{history}");
    assert_eq!(node(&history, "ask")["output"]["text"], "at last");
    assert_eq!(node(&history, "ask")["calls"][0]["attempts"], 4, "{history}");
    assert_eq!(model.requests().len(), 4);
}

#[tokio::test]
async fn a_call_that_keeps_failing_fails_its_node_and_retry_run_calls_again() {
    let model = StandIn::start(failing_first(vec![error(529, "overloaded_error", None); 2])).await;
    let vars = anthropic_env(&model.base);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let env = start(&[("ask", ASK)], "calls: { retries: 1, backoffMs: 10, maxBackoffMs: 100 }\n", &vars).await;

    let run_id = env.start_run("ask", json!({})).await["runId"].as_str().unwrap().to_owned();
    let history = env.stopped(&run_id).await;
    assert_eq!(history["run"]["status"], "failed", "{history}");
    assert_eq!(history["run"]["errorCode"], "model_call_failed", "{history}");
    let error = node(&history, "ask")["error"].as_str().unwrap();
    assert!(error.contains("529") && error.contains("gave up after 2 attempts"), "{error}");

    let (status, retried) = env.post(&format!("/api/runs/{run_id}/retry?project=global"), json!({})).await;
    assert_eq!(status, 200, "{retried}");
    let history = env.stopped(&run_id).await;
    assert_eq!(history["run"]["status"], "completed", "{history}");
    assert_eq!(model.requests().len(), 3);
}
