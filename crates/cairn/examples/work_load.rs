//! Load benchmark of the work surface: a second process that starts `cairn serve` on a fresh SQLite database, seeds
//! work items through `/mcp` with real tokens, and drives it from concurrent MCP clients over loopback HTTP.
//!
//! `cargo build --release -p cairn --bin cairn --example work_load && target/release/examples/work_load [ITEMS]
//! [CLIENTS]` (defaults 100000 and 8). Reports items created per second, a claim race (every client claims the same
//! items in the same order; each item must have exactly one winner), claims per second with each client on its own
//! items, and `work_list` latency (first pages and continued pages) as median / p95 / p99.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures::future::join_all;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

type Client = RunningService<RoleClient, ()>;

fn cairn() -> PathBuf {
    let exe = std::env::current_exe().expect("the example knows where it is");
    exe.parent().and_then(|examples| examples.parent()).expect("target/<profile>/examples").join("cairn")
}

async fn cli(home: &std::path::Path, args: &[&str]) -> Value {
    let output =
        tokio::process::Command::new(cairn()).arg("work").args(args).env("CAIRN_HOME", home).output().await.unwrap();
    assert!(output.status.success(), "cairn work {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else { unreachable!("arguments are objects") };
    client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args)).await.expect(tool)
}

fn ok(result: CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "{:?}", result.content);
    result.structured_content.unwrap()
}

fn percentiles(mut samples: Vec<Duration>) -> String {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1000.0;
    format!("median {:.2} ms, p95 {:.2} ms, p99 {:.2} ms ({} calls)", at(0.5), at(0.95), at(0.99), samples.len())
}

#[tokio::main]
async fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut args = std::env::args().skip(1);
    let items: usize = args.next().map_or(100_000, |a| a.parse().expect("ITEMS is a number"));
    let clients: usize = args.next().map_or(8, |a| a.parse().expect("CLIENTS is a number"));
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let account = cli(&home, &["account", "create", "--name", "bench"]).await["id"].as_str().unwrap().to_owned();
    let scopes = "mcp:read,mcp:write,decisions:read,decisions:write";
    let token = cli(&home, &["token", "create", "--account", &account, "--principal", "bench", "--kind", "agent", "--scopes", scopes])
        .await["token"]
        .as_str()
        .unwrap()
        .to_owned();

    let mut server = tokio::process::Command::new(cairn())
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env("CAIRN_HOME", &home)
        .env("RUST_LOG", "warn,cairn_web=info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let base = loop {
        let line = lines.next_line().await.unwrap().expect("cairn serve exited");
        if let Some((_, rest)) = line.split_once("listening on ") {
            break rest.trim().to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let url = format!("{base}/mcp");
    let pool: Vec<Client> = join_all((0..clients).map(|_| {
        let config = StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header(token.clone());
        async move { ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap() }
    }))
    .await;
    let space = ok(call(&pool[0], "decisions_create_space", json!({"name": "bench"})).await)["space"]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // Seed.
    let started = Instant::now();
    let per = items / clients;
    let seeded: Vec<Vec<String>> = join_all(pool.iter().enumerate().map(|(c, client)| {
        let space = space.clone();
        async move {
            let mut ids = Vec::with_capacity(per);
            for i in 0..per {
                let made = ok(call(client, "work_create", json!({"space_id": space, "title": format!("item {c}-{i}")})).await);
                ids.push(made["item"]["id"].as_str().unwrap().to_owned());
            }
            ids
        }
    }))
    .await;
    let seed_time = started.elapsed();
    println!("seeded {} items with {clients} clients in {:.1} s: {:.0} creates/s", per * clients, seed_time.as_secs_f64(), (per * clients) as f64 / seed_time.as_secs_f64());

    // Race: every client claims the same items in the same order.
    let race: Vec<String> = seeded[0].iter().take(1000).cloned().collect();
    let started = Instant::now();
    let wins: Vec<Vec<bool>> = join_all(pool.iter().enumerate().map(|(c, client)| {
        let race = race.clone();
        async move {
            let mut won = Vec::with_capacity(race.len());
            for id in &race {
                let result = call(client, "work_claim", json!({"item_id": id, "claimant": format!("racer {c}")})).await;
                won.push(result.is_error != Some(true));
            }
            won
        }
    }))
    .await;
    let race_time = started.elapsed();
    let double = (0..race.len()).filter(|i| wins.iter().filter(|w| w[*i]).count() != 1).count();
    println!(
        "race: {clients} clients x {} items, {} claim calls in {:.1} s ({:.0} calls/s); items without exactly one winner: {double}",
        race.len(),
        race.len() * clients,
        race_time.as_secs_f64(),
        (race.len() * clients) as f64 / race_time.as_secs_f64()
    );

    // Throughput: each client claims its own items.
    let each = (per - 1000).min(2500);
    let started = Instant::now();
    let claimed: Vec<usize> = join_all(pool.iter().enumerate().map(|(c, client)| {
        let mine: Vec<String> = seeded[c].iter().skip(1000).take(each).cloned().collect();
        async move {
            let mut n = 0;
            for id in &mine {
                let result = call(client, "work_claim", json!({"item_id": id, "claimant": format!("worker {c}")})).await;
                n += usize::from(result.is_error != Some(true));
            }
            n
        }
    }))
    .await;
    let claim_time = started.elapsed();
    let total: usize = claimed.iter().sum();
    println!(
        "claims: {total} of {} succeeded in {:.1} s with {clients} clients: {:.0} claims/s",
        each * clients,
        claim_time.as_secs_f64(),
        total as f64 / claim_time.as_secs_f64()
    );

    // work_list latency on one client.
    let mut first = Vec::new();
    let mut continued = Vec::new();
    let mut token_next = String::new();
    for i in 0..1000 {
        let args = if i % 2 == 1 && !token_next.is_empty() {
            json!({"page_token": token_next})
        } else {
            json!({})
        };
        let continuing = args.get("page_token").is_some();
        let started = Instant::now();
        let page = ok(call(&pool[0], "work_list", args).await);
        let took = started.elapsed();
        if continuing { continued.push(took) } else { first.push(took) }
        assert_eq!(page["items"].as_array().unwrap().len(), 50);
        token_next = page["next_page_token"].as_str().unwrap().to_owned();
    }
    println!("work_list, first page of 50 of {items} items: {}", percentiles(first));
    println!("work_list, continued page of 50: {}", percentiles(continued));
    let mut filtered = Vec::new();
    for i in 0..200 {
        let started = Instant::now();
        ok(call(&pool[0], "work_list", json!({"state": "claimed", "claimed_by": format!("worker {}", i % clients)})).await);
        filtered.push(started.elapsed());
    }
    println!("work_list, claimed_by one worker: {}", percentiles(filtered));
    for client in pool {
        let _ = client.cancel().await;
    }
    let _ = server.kill().await;
}
