//! Slow clients against `deepwork serve --transport http|sse`: connections that trickle their headers or stall in
//! their body are closed by the server within its time limits, while everyone else is answered — an event stream
//! opened before them included, which outlives both limits.

use std::process::Stdio;

use serde_json::{Value, json};

use crate::slow_connections::{Slow, all_closed_by_the_server};
use crate::support::*;

/// `deepwork serve --transport <transport>` on a free port: the process and its `127.0.0.1:PORT`.
async fn serve(project: &Project, transport: &str) -> (tokio::process::Child, String) {
    install_crypto();
    let port = free_port();
    let mut command = project.command(&["--transport", transport, "--port", &port.to_string()]);
    command.stderr(Stdio::null()).stdout(Stdio::null()).kill_on_drop(true);
    let server = command.spawn().expect("spawn cairn");
    wait_for_port(port).await;
    (server, format!("127.0.0.1:{port}"))
}

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
    let (_server, host) = serve(&project, "http").await;
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
    let (_server, host) = serve(&project, "sse").await;
    let http = reqwest::Client::new();
    let mut events = Events::of(http.get(format!("http://{host}/sse")).send().await.unwrap());
    let (_, endpoint) = events.next().await.expect("the endpoint event");
    let messages = format!("http://{host}{endpoint}");
    let slow = slow_connections(&host, &endpoint).await;

    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    assert_eq!(http.post(&messages).json(&initialize).send().await.unwrap().status(), 202);
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
