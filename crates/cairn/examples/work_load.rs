//! Load benchmark of the work surface: a second process that starts `cairn serve` (one node or several on one
//! database), seeds work items through `/mcp` with a real token, and drives it from concurrent MCP clients over
//! loopback HTTP.
//!
//! `cargo build --release -p cairn --bin cairn --example work_load && target/release/examples/work_load [ITEMS]
//! [CLIENTS] [--nodes N] [--database-url URL]` (defaults 100000 items, 8 clients, 1 node, a fresh SQLite file).
//! Clients are spread over the nodes. Reports the transport's ceiling (a small read-only call), items created per
//! second, a claim race (every client claims the same items in the same order; each item must have exactly one
//! winner), claims per second with each client on its own items, `work_claim_next` per second with every client
//! taking from one shared queue (no item may be handed out twice), and `work_list` latency (first and continued
//! pages, a filtered list, a word search) as median / p95 / p99.
//!
//! Each client speaks MCP the way hosts do today: `initialize` (protocol 2025-11-25, a session), then one POST per
//! call on a kept-alive connection, reading each answer's event stream to its end. (rmcp's own client stops reading
//! after the answer, which costs it a new TCP connection per call and would make this measure connection set-up.)
//! The clients share one token, and together call far faster than the default rate limit lets one token (100 calls a
//! second): the nodes run with `--rate-limit 0`, so this measures the server, not the limit.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::future::join_all;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

/// One MCP client over Streamable HTTP: a session of its own and a kept-alive connection.
struct Client {
    http: reqwest::Client,
    url: String,
    token: String,
    session: String,
    next_id: AtomicU64,
}

impl Client {
    async fn connect(url: &str, token: &str) -> Client {
        let mut client = Client {
            http: reqwest::Client::builder().pool_max_idle_per_host(4).build().unwrap(),
            url: url.to_owned(),
            token: token.to_owned(),
            session: String::new(),
            next_id: AtomicU64::new(1),
        };
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "work_load", "version": "1"}});
        let (session, _) = client.request("initialize", params).await;
        client.session = session;
        let response = client
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 202, "notifications/initialized");
        client
    }

    fn post(&self, body: Value) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("Accept", "application/json, text/event-stream")
            .json(&body);
        if !self.session.is_empty() {
            request = request.header("Mcp-Session-Id", &self.session).header("MCP-Protocol-Version", "2025-11-25");
        }
        request
    }

    /// Sends request `method` and returns the session id the answer carried and the answer's `result`.
    async fn request(&self, method: &str, params: Value) -> (String, Value) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let response = self.post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).send().await.unwrap();
        assert!(response.status().is_success(), "{method}: HTTP {}", response.status());
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let json = response.headers().get("content-type").is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
        let body = response.text().await.unwrap();
        let message: Value = if json {
            serde_json::from_str(&body).unwrap()
        } else {
            body.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .find(|message| message["id"] == json!(id))
                .unwrap_or_else(|| panic!("{method}: no answer in {body}"))
        };
        assert!(message.get("error").is_none(), "{method}: {message}");
        (session, message["result"].clone())
    }

    /// Calls `tool`; the structured result and whether it was an error.
    async fn call(&self, tool: &str, arguments: Value) -> (Value, bool) {
        let (_, result) = self.request("tools/call", json!({"name": tool, "arguments": arguments})).await;
        (result["structuredContent"].clone(), result["isError"] == json!(true))
    }

    /// Calls `tool`, which must succeed.
    async fn ok(&self, tool: &str, arguments: Value) -> Value {
        let (value, error) = self.call(tool, arguments).await;
        assert!(!error, "{tool}: {value}");
        value
    }
}

fn cairn() -> PathBuf {
    let exe = std::env::current_exe().expect("the example knows where it is");
    exe.parent().and_then(|examples| examples.parent()).expect("target/<profile>/examples").join("cairn")
}

fn command(home: &Path, database: Option<&str>) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(cairn());
    command.env("CAIRN_HOME", home);
    match database {
        Some(url) => command.env("CAIRN_DATABASE_URL", url),
        None => command.env_remove("CAIRN_DATABASE_URL"),
    };
    command
}

async fn cli(home: &Path, database: Option<&str>, args: &[&str]) -> Value {
    let output = command(home, database).arg("work").args(args).output().await.unwrap();
    assert!(output.status.success(), "cairn work {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Starts one `cairn serve` node; returns it and its base URL.
async fn node(home: &Path, database: Option<&str>) -> (Child, String) {
    let mut server = command(home, database)
        .args(["serve", "--addr", "127.0.0.1:0", "--rate-limit", "0"])
        // The banner only: a line per request would measure the log pipe, not the server.
        .env("RUST_LOG", "warn,cairn_web::app=info")
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
    (server, base)
}

fn percentiles(mut samples: Vec<Duration>) -> String {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1000.0;
    format!("median {:.2} ms, p95 {:.2} ms, p99 {:.2} ms ({} calls)", at(0.5), at(0.95), at(0.99), samples.len())
}

fn rate(what: &str, calls: usize, took: Duration) -> String {
    format!("{calls} {what} in {:.1} s: {:.0}/s", took.as_secs_f64(), calls as f64 / took.as_secs_f64())
}

#[tokio::main]
async fn main() {
    // reqwest is built with rustls (for the tests' clients) and no default crypto provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut positional = Vec::new();
    let (mut nodes, mut database) = (1_usize, None::<String>);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--nodes" => nodes = args.next().and_then(|n| n.parse().ok()).expect("--nodes N"),
            "--database-url" => database = Some(args.next().expect("--database-url URL")),
            _ => positional.push(arg),
        }
    }
    let items: usize = positional.first().map_or(100_000, |a| a.parse().expect("ITEMS is a number"));
    let clients: usize = positional.get(1).map_or(8, |a| a.parse().expect("CLIENTS is a number"));
    let database = database.as_deref();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");

    let account = cli(&home, database, &["account", "create", "--name", "bench"]).await["id"].as_str().unwrap().to_owned();
    let scopes = "mcp:read,mcp:write,decisions:read,decisions:write";
    let token = cli(&home, database, &["token", "create", "--account", &account, "--principal", "bench", "--kind", "agent", "--scopes", scopes])
        .await["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut servers = Vec::new();
    for _ in 0..nodes {
        servers.push(node(&home, database).await);
    }
    println!(
        "{nodes} node(s) on {}, {clients} clients, {items} items",
        if database.is_some() { "Postgres" } else { "SQLite" }
    );
    let pool: Vec<Client> = join_all((0..clients).map(|c| {
        let url = format!("{}/mcp", servers[c % nodes].1);
        let token = token.clone();
        async move { Client::connect(&url, &token).await }
    }))
    .await;
    let space = pool[0].ok("decisions_create_space", json!({"name": "bench"})).await["space"]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // The transport's ceiling: a read-only call that touches one small table.
    let started = Instant::now();
    join_all(pool.iter().map(|client| async move {
        for _ in 0..500 {
            client.ok("decisions_list_spaces", json!({})).await;
        }
    }))
    .await;
    println!("baseline: {}", rate("decisions_list_spaces calls", 500 * clients, started.elapsed()));

    // Seed.
    let started = Instant::now();
    let per = items / clients;
    let seeded: Vec<Vec<String>> = join_all(pool.iter().enumerate().map(|(c, client)| {
        let space = space.clone();
        async move {
            let mut ids = Vec::with_capacity(per);
            for i in 0..per {
                let made = client.ok("work_create", json!({"space_id": space, "title": format!("item {c}-{i}")})).await;
                ids.push(made["item"]["id"].as_str().unwrap().to_owned());
            }
            ids
        }
    }))
    .await;
    println!("seed: {}", rate("work_create calls", per * clients, started.elapsed()));

    // Race: every client claims the same items in the same order.
    let race: Vec<String> = seeded[0].iter().take(1000).cloned().collect();
    let started = Instant::now();
    let wins: Vec<Vec<bool>> = join_all(pool.iter().enumerate().map(|(c, client)| {
        let race = race.clone();
        async move {
            let mut won = Vec::with_capacity(race.len());
            for id in &race {
                let (_, error) = client.call("work_claim", json!({"item_id": id, "claimant": format!("racer {c}")})).await;
                won.push(!error);
            }
            won
        }
    }))
    .await;
    let took = started.elapsed();
    let double = (0..race.len()).filter(|i| wins.iter().filter(|w| w[*i]).count() != 1).count();
    println!(
        "race: {clients} clients x {} items, {}; items without exactly one winner: {double}",
        race.len(),
        rate("claim calls", race.len() * clients, took)
    );

    // Throughput: each client claims its own items.
    let each = (per - 1000).min(2500);
    let started = Instant::now();
    let claimed: Vec<usize> = join_all(pool.iter().enumerate().map(|(c, client)| {
        let mine: Vec<String> = seeded[c].iter().skip(1000).take(each).cloned().collect();
        async move {
            let mut n = 0;
            for id in &mine {
                let (_, error) = client.call("work_claim", json!({"item_id": id, "claimant": format!("worker {c}")})).await;
                n += usize::from(!error);
            }
            n
        }
    }))
    .await;
    let took = started.elapsed();
    let total: usize = claimed.iter().sum();
    println!("claims: {total} of {} succeeded; {}", each * clients, rate("successful claims", total, took));

    // Claim-next: every client takes the next ready item of one shared queue until none is left.
    let queue = pool[0].ok("decisions_create_space", json!({"name": "queue"})).await["space"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let per_queue = (items / 4).min(4000) / clients;
    join_all(pool.iter().map(|client| {
        let queue = queue.clone();
        async move {
            for i in 0..per_queue {
                client.ok("work_create", json!({"space_id": queue, "title": format!("queued {i}")})).await;
            }
        }
    }))
    .await;
    let started = Instant::now();
    let taken: Vec<Vec<String>> = join_all(pool.iter().enumerate().map(|(c, client)| {
        let queue = queue.clone();
        async move {
            let mut mine = Vec::new();
            loop {
                let next = client.ok("work_claim_next", json!({"space_id": queue, "claimant": format!("taker {c}")})).await;
                match next["item"]["id"].as_str() {
                    Some(id) => mine.push(id.to_owned()),
                    None => break mine,
                }
            }
        }
    }))
    .await;
    let took = started.elapsed();
    let handed: usize = taken.iter().map(Vec::len).sum();
    let distinct: std::collections::BTreeSet<&String> = taken.iter().flatten().collect();
    println!(
        "claim next: {clients} clients on one queue of {}, {}; handed out twice: {}",
        per_queue * clients,
        rate("successful claim_next calls", handed, took),
        handed - distinct.len()
    );

    // work_list latency on one client.
    let (mut first, mut continued) = (Vec::new(), Vec::new());
    let mut next = String::new();
    for i in 0..1000 {
        let continuing = i % 2 == 1 && !next.is_empty();
        let args = if continuing { json!({"page_token": next}) } else { json!({}) };
        let started = Instant::now();
        let page = pool[0].ok("work_list", args).await;
        let took = started.elapsed();
        if continuing { continued.push(took) } else { first.push(took) }
        assert_eq!(page["items"].as_array().unwrap().len(), 50);
        next = page["next_page_token"].as_str().unwrap().to_owned();
    }
    println!("work_list, first page of 50 of {items} items: {}", percentiles(first));
    println!("work_list, continued page of 50: {}", percentiles(continued));
    let mut filtered = Vec::new();
    for i in 0..200 {
        let started = Instant::now();
        pool[0].ok("work_list", json!({"state": "claimed", "claimed_by": format!("worker {}", i % clients)})).await;
        filtered.push(started.elapsed());
    }
    println!("work_list, claimed_by one worker: {}", percentiles(filtered));
    let mut searched = Vec::new();
    for i in 0..200 {
        let started = Instant::now();
        let found = pool[0].ok("work_list", json!({"query": format!("{}-{}", i % clients, 1000 + i)})).await;
        searched.push(started.elapsed());
        assert!(!found["items"].as_array().unwrap().is_empty(), "the query finds its item");
    }
    println!("work_list, query (a word of one title among {items}): {}", percentiles(searched));
    for (mut server, _) in servers {
        let _ = server.kill().await;
    }
}
