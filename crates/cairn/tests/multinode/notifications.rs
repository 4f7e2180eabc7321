//! Run notifications on two nodes of one database: both watch the outbox, and every delivery reaches the receiver
//! exactly once while it answers 200 — the compare-and-set claim keeps the second node from sending an attempt the
//! first took. On SQLite the nodes share one file; on PostgreSQL (`CAIRN_TEST_POSTGRES_URL`) one database.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode};
use serde_json::json;

use crate::support::{Client, Cluster};

/// A person's decision, nothing else.
const ASK: &str = "name: ask\ninitial: ask\nnodes:\n  ask:\n    type: human\n    config: { prompt: Go? }\n    \
    transitions: { go: $end }\n";

/// A receiver at `POST /hook` that answers 200 and counts the requests of each delivery id: its URL and the counts.
async fn receiver() -> (String, Arc<Mutex<BTreeMap<String, usize>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let counts: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
    let kept = counts.clone();
    let hook = move |headers: HeaderMap| {
        let kept = kept.clone();
        async move {
            let id = headers.get("x-roscoe-delivery").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
            *kept.lock().unwrap().entry(id).or_default() += 1;
            StatusCode::OK
        }
    };
    let app = axum::Router::new().route("/hook", axum::routing::post(hook));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, counts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_watching_one_outbox_send_each_delivery_once() {
    let (hook, counts) = receiver().await;
    let cluster = Cluster::any();
    for node in ["a", "b"] {
        let home = cluster.home(node);
        std::fs::create_dir_all(home.join("workflows")).unwrap();
        std::fs::write(home.join("workflows/ask.yaml"), ASK).unwrap();
        std::fs::write(home.join("roscoe.yaml"), format!("notify:\n  - url: {hook}\n")).unwrap();
    }
    let (a, b) = (cluster.node("a").await, cluster.node("b").await);
    let first = Client::http(&a.url("/roscoe/mcp"), None).await;
    let second = Client::http(&b.url("/roscoe/mcp"), None).await;
    for i in 0..6 {
        let client = if i % 2 == 0 { &first } else { &second };
        let started = client.ok("start_workflow", json!({"global": true, "id": "ask"})).await;
        assert_eq!(started["status"], "paused", "{started}");
    }
    // Generous bounds, not timing claims: all six arrive, then nothing more comes for a while.
    let begun = Instant::now();
    while counts.lock().unwrap().len() < 6 {
        assert!(begun.elapsed() < Duration::from_secs(60), "not every delivery arrived: {:?}", counts.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let counts = counts.lock().unwrap().clone();
    assert_eq!(counts.len(), 6, "one delivery per paused run: {counts:?}");
    assert!(counts.iter().all(|(id, n)| !id.is_empty() && *n == 1), "each delivered once: {counts:?}");
    first.close().await;
    second.close().await;
}
