//! `deepwork serve --transport http|sse` against pages of other sites: a browser's `Origin` must be the server's own
//! (scheme, host and port; `Origin: null` included in the refusals), and the legacy transport takes messages as
//! `application/json` only — what a page may post across sites without asking first (`text/plain`) is refused, not
//! executed.

use serde_json::{Value, json};

use crate::support::*;

#[tokio::test(flavor = "multi_thread")]
async fn streamable_http_refuses_other_sites_origins() {
    let project = Project::new();
    let (_server, host) = project.serve_over("http").await;
    let base = format!("http://{host}");
    let http = reqwest::Client::new();
    let post = |origin: Option<&str>| {
        let mut request = http
            .post(format!("{base}/mcp"))
            .header("Accept", "application/json, text/event-stream")
            .json(&initialize_request("2025-11-25"));
        if let Some(origin) = origin {
            request = request.header("Origin", origin);
        }
        request.send()
    };
    for origin in ["https://evil.example", "null", "http://localhost.evil.example:8000"] {
        let refused = post(Some(origin)).await.unwrap();
        assert_eq!(refused.status(), 403, "{origin}");
        let reason = refused.text().await.unwrap();
        assert!(reason.contains(&format!("Origin '{origin}' is not allowed")), "{reason}");
    }
    let get = http.get(format!("{base}/mcp")).header("Origin", "https://evil.example").send().await.unwrap();
    assert_eq!(get.status(), 403);
    // Same origin is the same scheme, host and port: `localhost` may resolve to another server than `127.0.0.1`.
    let alias = base.replace("127.0.0.1", "localhost");
    assert_eq!(post(Some(alias.as_str())).await.unwrap().status(), 403, "{alias}");
    for origin in [Some(base.as_str()), None] {
        assert_eq!(post(origin).await.unwrap().status(), 200, "{origin:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_sse_refuses_other_sites_and_messages_that_are_not_json() {
    let project = Project::new();
    let (_server, host) = project.serve_over("sse").await;
    let base = format!("http://{host}");
    let http = reqwest::Client::new();
    for origin in ["https://evil.example", "null"] {
        let refused = http.get(format!("{base}/sse")).header("Origin", origin).send().await.unwrap();
        assert_eq!(refused.status(), 403, "{origin}");
    }
    let response = http.get(format!("{base}/sse")).header("Origin", &base).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let mut events = Events::of(response);
    let (_, endpoint) = events.next().await.expect("the endpoint event");
    let messages = format!("{base}{endpoint}");
    assert_eq!(http.post(&messages).json(&initialize_request("2024-11-05")).send().await.unwrap().status(), 202);
    events.next().await.expect("the initialize answer");
    http.post(&messages).json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).send().await.unwrap();

    let start = |id: u32, session: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "start_workflow", "arguments": start("single", "only", session)}})
    };
    let plain = http
        .post(&messages)
        .header("Content-Type", "text/plain")
        .body(start(2, "plain").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status(), 415);
    assert!(plain.text().await.unwrap().contains("Content-Type: application/json"));
    let foreign =
        http.post(&messages).header("Origin", "https://evil.example").json(&start(3, "foreign")).send().await.unwrap();
    assert_eq!(foreign.status(), 403);
    assert_eq!(http.post(&messages).json(&start(4, "own")).send().await.unwrap().status(), 202);
    let (_, answer) = events.next().await.expect("the answer to the accepted call");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["id"], 4, "the refused calls get no answer: {answer}");
    assert!(project.state_file("own", "state.json").exists(), "the accepted call ran");
    assert!(!project.state_file("plain", "state.json").exists(), "the text/plain call did not run");
    assert!(!project.state_file("foreign", "state.json").exists(), "the other site's call did not run");
}
