//! A local stand-in for the OpenAI Responses API, for tests that run the real Codex CLI offline: `POST
//! /v1/responses` answered as the Server-Sent Events Codex reads (`response.created`, `response.output_item.done`,
//! `response.completed` with `usage`), the next [`Turn`] of a [`Script`]. Codex offers each MCP server's tools as a
//! `namespace` (`mcp__<server>`) and expects a call to name the namespace and the tool apart; it hands a result back
//! as `function_call_output` text of the form `Wall time: …\nOutput:\n<the tool's text>`. Every request body is kept.

#![allow(dead_code, reason = "each test binary that includes this file uses part of it")]

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

use crate::host_script::{Script, Turn};

#[derive(Clone)]
struct Shared {
    script: Arc<Script>,
    requests: Arc<Mutex<Vec<Value>>>,
}

/// A running stand-in; stops when dropped.
pub struct ResponsesStandIn {
    /// `http://127.0.0.1:PORT/v1` (a model provider's `base_url`).
    pub base: String,
    requests: Arc<Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ResponsesStandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ResponsesStandIn {
    /// Starts a stand-in playing `script` on a free loopback port.
    pub async fn start(script: impl Fn(&[String]) -> Turn + Send + Sync + 'static) -> ResponsesStandIn {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let shared = Shared { script: Arc::new(script), requests: requests.clone() };
        let app = Router::new().route("/v1/responses", post(respond)).with_state(shared);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/v1", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        ResponsesStandIn { base, requests, task }
    }

    /// Every request body received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

/// The tool results of a request's `input`, oldest first, without Codex's `Wall time … Output:` preamble.
fn tool_results(body: &Value) -> Vec<String> {
    let items = body["input"].as_array().into_iter().flatten();
    let outputs = items.filter(|item| item["type"] == "function_call_output").map(|item| match &item["output"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    });
    outputs.map(|text| text.split_once("Output:\n").map_or(text.clone(), |(_, rest)| rest.to_owned())).collect()
}

async fn respond(State(shared): State<Shared>, axum::Json(body): axum::Json<Value>) -> Response {
    shared.requests.lock().unwrap().push(body.clone());
    let has_tools = body["tools"].as_array().is_some_and(|tools| !tools.is_empty());
    let turn = if has_tools { (shared.script)(&tool_results(&body)) } else { Turn::Text("cairn".into()) };
    let n = shared.requests.lock().unwrap().len();
    let item = match turn {
        Turn::Call { server, tool, args } => json!({
            "type": "function_call", "id": format!("fc_{n}"), "call_id": format!("call_{n}"),
            "namespace": format!("mcp__{server}"), "name": tool, "arguments": args.to_string(),
        }),
        Turn::Text(text) => json!({
            "type": "message", "role": "assistant", "id": format!("msg_{n}"),
            "content": [{"type": "output_text", "text": text}],
        }),
    };
    let id = format!("resp_{n}");
    let usage = json!({"input_tokens": 100, "output_tokens": 20, "total_tokens": 120});
    let events = [
        ("response.created", json!({"type": "response.created", "response": {"id": id}})),
        ("response.output_item.added", json!({"type": "response.output_item.added", "output_index": 0, "item": item})),
        ("response.output_item.done", json!({"type": "response.output_item.done", "output_index": 0, "item": item})),
        ("response.completed", json!({"type": "response.completed", "response": {"id": id, "usage": usage}})),
    ];
    let stream: String = events.iter().map(|(event, data)| format!("event: {event}\ndata: {data}\n\n")).collect();
    ([(header::CONTENT_TYPE, "text/event-stream")], Body::from(stream)).into_response()
}
