//! Slow clients against `deepwork serve --transport http|sse`: connections that trickle their headers or stall in
//! their body are closed by the server within its time limits, while everyone else is answered — an event stream
//! opened before them included, which outlives both limits.

use serde_json::{Value, json};

use crate::slow_connections::{Slow, all_closed_by_the_server};
use crate::support::*;

async fn slow_connections(host: &str, path: &str) -> Vec<Slow> {
    let mut slow = Vec::new();
    for _ in 0..10 {
        slow.push(Slow::trickling_headers(host, path).await);
        slow.push(Slow::stalling_body(host, path).await);
    }
    slow
}

#[tokio::test(flavor = "multi_thread")]
async fn streamable_http_closes_slow_connections_while_others_are_served() {
    let project = Project::new();
    let (_server, host) = project.serve_over("http").await;
    let slow = slow_connections(&host, "/mcp").await;
    let client = Client::http_at(&format!("http://{host}/mcp")).await;
    assert_eq!(client.service.list_all_tools().await.unwrap().len(), 11);
    all_closed_by_the_server(slow).await;
    assert_eq!(client.service.list_all_tools().await.unwrap().len(), 11, "the client is still served");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_sse_closes_slow_connections_while_its_streams_go_on() {
    let project = Project::new();
    let (_server, host) = project.serve_over("sse").await;
    let http = reqwest::Client::new();
    let mut events = Events::of(http.get(format!("http://{host}/sse")).send().await.unwrap());
    let (_, endpoint) = events.next().await.expect("the endpoint event");
    let messages = format!("http://{host}{endpoint}");
    let slow = slow_connections(&host, &endpoint).await;

    assert_eq!(http.post(&messages).json(&initialize_request("2024-11-05")).send().await.unwrap().status(), 202);
    events.next().await.expect("the initialize answer");
    http.post(&messages).json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).send().await.unwrap();

    all_closed_by_the_server(slow).await;
    // The stream opened before the slow connections has outlived both limits and still carries answers.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(http.post(&messages).json(&list).send().await.unwrap().status(), 202);
    let (_, answer) = events.next().await.expect("the tools/list answer");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["result"]["tools"].as_array().map(Vec::len), Some(11), "{answer}");
}
