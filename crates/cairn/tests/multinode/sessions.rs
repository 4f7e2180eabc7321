//! Sessions across nodes: a client of a protocol version before 2026-07-28 initializes on node a, gets an
//! `Mcp-Session-Id`, and goes on with that session on node b — on the roscoe and the work endpoints — until it ends
//! the session there.

use serde_json::{Value, json};

use crate::support::Cluster;

/// The protocol version such clients speak.
const OLD_PROTOCOL: &str = "2025-06-18";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_old_protocol_session_started_on_one_node_continues_on_another() {
    let cluster = Cluster::any();
    let (a, b) = (cluster.node("a").await, cluster.node("b").await);
    let bearer = cluster.bearer().await;

    let roscoe = Session::initialize(&a.url("/roscoe/mcp"), None).await;
    let listed = roscoe.call(&b.url("/roscoe/mcp"), "tools/call", json!({"name": "list_workflows", "arguments": {"global": true}})).await;
    let text = listed["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{listed}"));
    assert!(text.contains("\"ship\""), "node b served the session: {text}");

    let work = Session::initialize(&a.url("/mcp"), Some(&bearer)).await;
    let space = work
        .call(&b.url("/mcp"), "tools/call", json!({"name": "decisions_create_space", "arguments": {"name": "Moved", "description": ""}}))
        .await;
    assert_eq!(space["result"]["isError"], false, "{space}");
    let tools = work.call(&a.url("/mcp"), "tools/list", json!({})).await;
    assert!(tools["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "and node a still does: {tools}");

    // Ending the session on node b forgets it there (and in the database).
    let ended = work.request(reqwest::Client::new().delete(b.url("/mcp"))).send().await.unwrap();
    assert_eq!(ended.status(), 204, "ended: no content");
    let gone = work.post(&b.url("/mcp"), "tools/list", json!({})).await;
    assert_eq!(gone.status(), 404, "a session nobody holds any more is unknown");
}

/// A client session kept by `Mcp-Session-Id`, spoken in raw HTTP as an old client does.
struct Session {
    id: String,
    bearer: Option<String>,
}

impl Session {
    /// `initialize` + `notifications/initialized` at `url`.
    async fn initialize(url: &str, bearer: Option<&str>) -> Session {
        let mut session = Session { id: String::new(), bearer: bearer.map(str::to_owned) };
        let params = json!({"protocolVersion": OLD_PROTOCOL, "capabilities": {}, "clientInfo": {"name": "old-client", "version": "1"}});
        let response = session.post(url, "initialize", params).await;
        assert_eq!(response.status(), 200);
        session.id = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let answer = message(response).await;
        assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
        let body = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let initialized = session.request(reqwest::Client::new().post(url)).json(&body).send().await.unwrap();
        assert_eq!(initialized.status(), 202);
        session
    }

    /// A request with the session's headers.
    fn request(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let mut builder = builder.header("accept", "application/json, text/event-stream");
        if !self.id.is_empty() {
            builder = builder.header("mcp-session-id", &self.id).header("mcp-protocol-version", OLD_PROTOCOL);
        }
        match &self.bearer {
            Some(bearer) => builder.bearer_auth(bearer),
            None => builder,
        }
    }

    /// POSTs the request `method` with `params` to `url`.
    async fn post(&self, url: &str, method: &str, params: Value) -> reqwest::Response {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        self.request(reqwest::Client::new().post(url)).json(&body).send().await.unwrap()
    }

    /// [`Session::post`], which must be answered; the JSON-RPC answer.
    async fn call(&self, url: &str, method: &str, params: Value) -> Value {
        let response = self.post(url, method, params).await;
        assert_eq!(response.status(), 200, "{method} at {url}");
        message(response).await
    }
}

/// The JSON-RPC message of an SSE (or JSON) answer.
async fn message(response: reqwest::Response) -> Value {
    let body = response.text().await.unwrap();
    let data = body.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).find(|d| !d.is_empty());
    serde_json::from_str(data.unwrap_or(&body)).unwrap_or_else(|e| panic!("{e}: {body}"))
}
