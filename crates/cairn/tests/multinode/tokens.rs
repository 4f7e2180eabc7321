//! A token revoked while the nodes hold it in their caches: each node serves the token from its cache until the
//! revocation, then refuses it as soon as it hears of it through the changes feed — long before the cache's own
//! limit (30 s) would have dropped it.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::cairn_serve::Served;
use crate::prometheus;
use crate::support::{ALL_SCOPES, Cluster};

/// How long a node may take to hear of a revocation here: far more than the milliseconds it takes, far less than
/// the cache's 30 s.
const HEARD_WITHIN: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_revoked_from_the_command_line_is_refused_by_every_node_that_had_it_cached() {
    let Some(cluster) = Cluster::postgres("tokens") else { return };
    let nodes = [cluster.node("a").await, cluster.node("b").await];
    let made = cluster.token(ALL_SCOPES).await;
    let bearer = made["token"].as_str().unwrap();
    let scraper = cluster.token("metrics:read").await["token"].as_str().unwrap().to_owned();

    // Each node reads the token once, then serves it from its cache (once its changes listener is connected). A
    // scrape counts its own token's lookup too: the bearer's came from the cache when two cache lookups lie between
    // the scrapes around it.
    for node in &nodes {
        let deadline = Instant::now() + HEARD_WITHIN;
        loop {
            let before = cache_lookups(node, &scraper).await;
            assert_eq!(initialize(node, bearer).await, 200);
            if cache_lookups(node, &scraper).await - before >= 2.0 {
                break;
            }
            assert!(Instant::now() < deadline, "{}: the token was never served from the cache", node.base);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    cluster.admin(&["token", "revoke", made["token_id"].as_str().unwrap()]).await;
    for node in &nodes {
        let revoked_at = Instant::now();
        while initialize(node, bearer).await != 401 {
            assert!(revoked_at.elapsed() < HEARD_WITHIN, "{}: the revoked token is still accepted", node.base);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for _ in 0..5 {
            assert_eq!(initialize(node, bearer).await, 401, "{}: and it stays refused", node.base);
        }
    }
}

/// The status of an MCP `initialize` sent to `node` with `bearer`.
async fn initialize(node: &Served, bearer: &str) -> u16 {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let response = reqwest::Client::new()
        .post(node.url("/mcp"))
        .bearer_auth(bearer)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap();
    response.status().as_u16()
}

/// How many tokens `node` served from its cache, by its `/metrics`.
async fn cache_lookups(node: &Served, scraper: &str) -> f64 {
    let response = reqwest::Client::new().get(node.url("/metrics")).bearer_auth(scraper).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let metrics = prometheus::parse(&response.text().await.unwrap());
    prometheus::value(&metrics, "cairn_token_lookups_total", &[("source", "cache")])
}
