//! Cancelling a run whose server is waiting on a slow model call drops the call at once — the stand-in sees its
//! caller hang up, long before its answer was due — and the node ends `cancelled`. A server killed mid-call loses
//! nothing: started again, it makes the call again and the run completes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use super::anthropic::{Answer, Request, StandIn};
use super::support::{anthropic_env, node, start};

#[tokio::test]
async fn cancel_run_drops_the_call_in_flight_and_the_node_ends_cancelled() {
    let model = StandIn::start(|_: &Request| Answer::text("too late").after(Duration::from_secs(120))).await;
    let vars = anthropic_env(&model.base);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let workflow = "name: slow\ninitial: think\nnodes:\n  think:\n    type: ai_agent\n    config: { prompt: \"think long\" }\n    transitions: { success: $end }\n";
    let env = start(&[("slow", workflow)], "", &vars).await;

    let started = env.start_run("slow", json!({})).await;
    assert_eq!(started["status"], "running", "the start returns while the call is made: {started}");
    let run_id = started["runId"].as_str().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while model.requests().is_empty() {
        assert!(Instant::now() < deadline, "the call never reached the stand-in");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let (status, cancelled) = env.post(&format!("/api/runs/{run_id}/cancel?project=global"), json!({})).await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled");
    // Generous bound: the answer was due in two minutes; the call is dropped at once (1 s by design).
    let deadline = Instant::now() + Duration::from_secs(10);
    while model.dropped() == 0 {
        assert!(Instant::now() < deadline, "the stand-in never saw the call dropped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let history = env.get(&format!("/api/runs/{run_id}?project=global")).await;
    assert_eq!(history["run"]["status"], "cancelled", "{history}");
    assert_eq!(node(&history, "think")["status"], "cancelled", "{history}");
    assert_eq!(model.requests().len(), 1, "nothing was called again");
}

#[tokio::test]
async fn a_server_killed_mid_call_calls_again_when_it_restarts_and_the_run_completes() {
    // The first call never answers in time; once the server is gone, calls answer at once.
    let slow = Arc::new(AtomicBool::new(true));
    let switch = slow.clone();
    let model = StandIn::start(move |_: &Request| {
        let delay = if switch.load(Ordering::SeqCst) { Duration::from_secs(120) } else { Duration::ZERO };
        Answer::text("made it").after(delay)
    })
    .await;
    let vars = anthropic_env(&model.base);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let workflow = "name: slow\ninitial: think\nnodes:\n  think:\n    type: ai_agent\n    config: { prompt: \"think\" }\n    transitions: { success: $end }\n";
    let mut env = start(&[("slow", workflow)], "", &vars).await;

    let run_id = env.start_run("slow", json!({})).await["runId"].as_str().unwrap().to_owned();
    let deadline = Instant::now() + Duration::from_secs(30);
    while model.requests().is_empty() {
        assert!(Instant::now() < deadline, "the call never reached the stand-in");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    slow.store(false, Ordering::SeqCst);
    env.crash_and_restart().await;

    let history = env.stopped(&run_id).await;
    assert_eq!(history["run"]["status"], "completed", "{history}");
    assert_eq!(node(&history, "think")["output"]["text"], "made it");
    assert_eq!(model.requests().len(), 2, "the call was made once more");
}
