//! Benchmark of the server's own model calls, in process on a fresh SQLite file, against the tests' Anthropic
//! stand-in on loopback: (1) the server's overhead per model call — a 50-node linear workflow of `ai_agent` nodes
//! run server-side to the end against a stand-in that answers at once, its wall time divided by its 50 calls (run
//! creation, the engine's transactions, routing, the HTTP round trip, usage and cost); (2) 32 agents at once whose
//! stand-in answers each call after 200 ms, start to end (parallel calls: about 200 ms, not 32 × 200 ms) — a map
//! of 32 branches, since a consensus has at most 10 agents (the workflow schema's limit) — and (3) a 10-agent
//! consensus gate with the same delay.
//!
//! `cargo run --release -p cairn --example model_calls [RUNS]` (default 20 runs of each).

#![allow(unreachable_pub, reason = "the stand-in is shared with the test binaries, whose helpers are pub")]

#[path = "../tests/common/anthropic.rs"]
mod anthropic;

use std::time::{Duration, Instant};

use anthropic::{Answer, Request, StandIn};
use cairn_roscoe::{Actor, Execution, Runs, Scope, Service, StartOptions, StartRequest};
use cairn_store::Store;

const NODES: usize = 50;
const BRANCHES: usize = 32;
const AGENTS: usize = 10;

fn linear_workflow() -> String {
    let mut yaml = String::from("name: linear\ninitial: n1\nnodes:\n");
    for i in 1..=NODES {
        let next = if i == NODES { "$end".to_owned() } else { format!("n{}", i + 1) };
        yaml.push_str(&format!(
            "  n{i}:\n    type: ai_agent\n    config: {{ prompt: \"step {i}\" }}\n    transitions: {{ success: {next} }}\n"
        ));
    }
    yaml
}

fn consensus_workflow() -> String {
    format!(
        "name: vote\ninitial: vote\nnodes:\n  vote:\n    type: consensus\n    config: {{ mode: gate, agentCount: {AGENTS}, \
         quorum: {AGENTS}, prompt: \"Ship?\", choices: [approve, reject] }}\n    transitions: {{ approve: $end, reject: $fail, \
         no_consensus: $fail }}\n"
    )
}

fn map_workflow() -> String {
    let items: Vec<String> = (1..=BRANCHES).map(|i| format!("item{i}")).collect();
    format!(
        "name: fan\ninitial: fan\nnodes:\n  fan:\n    type: map\n    config: {{ items: [{}], maxItems: {BRANCHES}, \
         prompt: \"Ship? {{{{ item }}}}\" }}\n    transitions: {{ success: $end, failure: $fail }}\n",
        items.join(", ")
    )
}

fn median_p90(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (ms(samples[samples.len() / 2]), ms(samples[samples.len() * 9 / 10]))
}

#[tokio::main]
async fn main() {
    let runs_to_time: usize = std::env::args().nth(1).map_or(20, |n| n.parse().expect("RUNS is a number"));
    let model = StandIn::start(|request: &Request| {
        if request.first_user_text().starts_with("Ship?") {
            Answer::text(r#"{"reasoning": "ok", "verdict": "approve"}"#).after(Duration::from_millis(200))
        } else {
            Answer::text("done")
        }
    })
    .await;
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let home = tmp.path().join("home");
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join(".roscoe/workflows")).unwrap();
    std::fs::write(project.join(".roscoe/workflows/linear.yaml"), linear_workflow()).unwrap();
    std::fs::write(project.join(".roscoe/workflows/vote.yaml"), consensus_workflow()).unwrap();
    std::fs::write(project.join(".roscoe/workflows/fan.yaml"), map_workflow()).unwrap();
    // SAFETY: set before any thread reads the environment (the providers read it at each call).
    unsafe {
        std::env::set_var("ANTHROPIC_BASE_URL", &model.base);
        std::env::set_var("ANTHROPIC_API_KEY", "bench-key");
    }
    let store = Store::open(&Store::default_url(&home)).await.expect("the database opens");
    let runs = Runs::new(store.clone(), Service::new(&home));
    let scope = Scope::resolve(Some(project.to_str().unwrap()), None).expect("the project scope");
    let actor = Actor::local("cli");
    let options = || StartOptions { execution: Some(Execution::Server), wait: true, ..StartOptions::default() };

    let mut per_call = Vec::new();
    let mut fanned = Vec::new();
    let mut consensus = Vec::new();
    for i in 0..=runs_to_time {
        let mut timed = Vec::new();
        for id in ["linear", "fan", "vote"] {
            let started = Instant::now();
            let start = StartRequest { scope: &scope, id, source: None, input: None, actor: &actor };
            let run = runs.start_workflow_with(start, options()).await.expect("a start");
            timed.push(started.elapsed());
            assert_eq!(run.result.status, "completed", "{:?}", run.result);
        }
        if i > 0 {
            // The first of each is a warm-up.
            per_call.push(timed[0] / NODES as u32);
            fanned.push(timed[1]);
            consensus.push(timed[2]);
        }
    }
    assert_eq!(model.requests().len(), (runs_to_time + 1) * (NODES + BRANCHES + AGENTS));
    assert!(model.most_at_once() >= BRANCHES, "the branches were called at once");
    let (median, p90) = median_p90(per_call);
    println!("model call, server overhead (50-node run / 50): median {median:.3} ms, p90 {p90:.3} ms");
    let (median, p90) = median_p90(fanned);
    println!("{BRANCHES} agents at once (map), 200 ms per answer: median {median:.1} ms, p90 {p90:.1} ms");
    let (median, p90) = median_p90(consensus);
    println!("{AGENTS}-agent consensus, 200 ms per answer: median {median:.1} ms, p90 {p90:.1} ms");
    store.close().await;
}
