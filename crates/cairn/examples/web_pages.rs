//! Benchmark of the web UI's pages: starts `cairn serve` (the binary beside this example) on a fresh SQLite home,
//! seeds 10,000 runs (a third paused at a person's decision, a third completed, a third cancelled) and 1,000 work
//! items (200 in each column of the board) through the REST API, then times each page over loopback HTTP: 3 warm-ups,
//! then 50 requests, one at a time. The time is the client's round trip, so the server's own is a little lower.
//!
//! `cargo build --release -p cairn --bin cairn --example web_pages && target/release/examples/web_pages [RUNS]
//! [ITEMS]` (defaults 10000 and 1000).

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const DECIDE: &str = "name: decide\ninitial: ask\nnodes:\n  ask:\n    type: human\n    config: { prompt: Go? }\n    \
    transitions: { ship: $end, stop: $fail }\n";
const SHIP: &str = "name: ship\ninitial: draft\nnodes:\n  draft:\n    type: ai_agent\n    config: { prompt: Write }\n    \
    transitions: { success: ask }\n  ask:\n    type: human\n    config: { prompt: Ship? }\n    \
    transitions: { ship: $end, stop: $fail }\n";

fn stats(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (ms(samples[samples.len() / 2]), ms(samples[samples.len() * 9 / 10]))
}

async fn ok(request: reqwest::RequestBuilder) -> Value {
    let response = request.send().await.expect("the server answers");
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    assert!(status.is_success(), "{status}: {body}");
    body
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().map_or(10_000, |n| n.parse().expect("RUNS is a number"));
    let items: usize = args.next().map_or(1_000, |n| n.parse().expect("ITEMS is a number"));
    let binary = std::env::current_exe().unwrap().parent().unwrap().parent().unwrap().join("cairn");
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    std::fs::write(home.join("workflows/decide.yaml"), DECIDE).unwrap();
    std::fs::write(home.join("workflows/ship.yaml"), SHIP).unwrap();

    let mut server = Command::new(&binary)
        .args(["serve", "--addr", "127.0.0.1:0", "--rate-limit", "0"])
        .env("CAIRN_HOME", &home)
        .env("RUST_LOG", "warn,cairn_web=info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("cairn serve starts");
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let base = loop {
        let line = lines.next_line().await.unwrap().expect("cairn serve prints where it listens");
        if let Some((_, rest)) = line.split_once("listening on ") {
            break rest.trim().to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let token = {
        let out = std::process::Command::new(&binary)
            .args(["work", "token", "create", "--principal", "bench", "--kind", "person"])
            .args(["--scopes", "mcp:read,mcp:write,decisions:read,decisions:write"])
            .env("CAIRN_HOME", &home)
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).expect("a token")["token"].as_str().unwrap().to_owned()
    };
    // The HTTP client is built without a default TLS provider (as in the tests).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let url = |path: &str| format!("{base}{path}");

    let began = Instant::now();
    let mut a_run = String::new();
    for i in 0..runs {
        let started = ok(client.post(url("/api/runs?project=global")).json(&json!({"workflowId": "decide"}))).await;
        let id = started["runId"].as_str().unwrap().to_owned();
        match i % 3 {
            0 => a_run = id,
            1 => {
                let answer = json!({"transition": "ship"});
                ok(client.post(url(&format!("/api/runs/{id}/resume?project=global"))).json(&answer)).await;
            }
            _ => {
                ok(client.post(url(&format!("/api/runs/{id}/cancel?project=global"))).json(&json!({}))).await;
            }
        }
    }
    let space = ok(client.post(url("/api/spaces")).bearer_auth(&token).json(&json!({"name": "Bench"}))).await;
    let space_id = space["space"]["id"].as_str().unwrap().to_owned();
    let mut an_item = String::new();
    for i in 0..items {
        let body = json!({"space_id": space_id, "title": format!("Item {i}"), "notes": "Seeded by the benchmark."});
        let made = ok(client.post(url("/api/work/items")).bearer_auth(&token).json(&body)).await;
        let id = made["id"].as_str().unwrap().to_owned();
        let column = i % 5;
        if column >= 1 {
            let claim = json!({"claimant": format!("agent-{}", i % 7)});
            ok(client.post(url(&format!("/api/work/items/{id}/claim"))).bearer_auth(&token).json(&claim)).await;
        }
        if column >= 2 {
            let state = ["in_progress", "blocked", "done"][column - 2];
            ok(client.patch(url(&format!("/api/work/items/{id}"))).bearer_auth(&token).json(&json!({"state": state}))).await;
        }
        an_item = id;
    }
    eprintln!("seeded {runs} runs and {items} items in {:.1} s", began.elapsed().as_secs_f64());

    let pages = [
        ("`/healthz` (no page: the round trip and the database ping)".to_owned(), "/healthz".to_owned()),
        ("`/assets/style.css` (no page: the round trip alone)".to_owned(), "/assets/style.css".to_owned()),
        ("home (`/`), every workspace".to_owned(), "/".to_owned()),
        ("runs list".to_owned(), "/runs?project=global".to_owned()),
        ("a run's page".to_owned(), format!("/runs/{a_run}?project=global")),
        ("workflows list".to_owned(), "/workflows?project=global".to_owned()),
        ("a workflow's page (graph)".to_owned(), "/workflows/ship?project=global".to_owned()),
        ("the editor".to_owned(), "/workflows/ship/edit?project=global".to_owned()),
        (format!("work board, {items} items"), "/work".to_owned()),
        ("a work item's page".to_owned(), format!("/work/items/{an_item}")),
        ("settings".to_owned(), "/settings".to_owned()),
        ("a docs page".to_owned(), "/docs/guides/web-ui".to_owned()),
    ];
    println!("| page ({runs} runs, {items} work items) | median ms (p90) |");
    println!("|---|---|");
    for (name, path) in pages {
        let mut samples = Vec::new();
        for i in 0..53 {
            let began = Instant::now();
            let response = client.get(url(&path)).send().await.unwrap();
            let status = response.status();
            response.bytes().await.unwrap();
            assert!(status.is_success(), "{path}: {status}");
            if i >= 3 {
                samples.push(began.elapsed());
            }
        }
        let (median, p90) = stats(samples);
        println!("| {name} | {median:.2} ({p90:.2}) |");
    }
    server.kill().await.ok();
}
