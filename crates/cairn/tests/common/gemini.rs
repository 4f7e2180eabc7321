//! A local stand-in for the Generative Language API (the Gemini API), for tests that run the real Gemini CLI offline
//! (`GOOGLE_GEMINI_BASE_URL`): `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` answered as the
//! Server-Sent Events Gemini CLI reads, the next [`Turn`] of a [`Script`] as a `functionCall` named as Gemini CLI
//! names MCP tools (`mcp_<server>_<tool>`) or as text; `:generateContent` (the CLI's own side questions: which model
//! to route to, who speaks next) answered with a JSON text fitting both; `:countTokens` with a small count. A tool's
//! result comes back as a `functionResponse` part, whose `output` text the script reads. Every request body is kept.

#![allow(dead_code, reason = "each test binary that includes this file uses part of it")]

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::host_script::{Script, Turn};

#[derive(Clone)]
struct Shared {
    script: Arc<Script>,
    requests: Arc<Mutex<Vec<Value>>>,
}

/// A running stand-in; stops when dropped.
pub struct GeminiStandIn {
    /// `http://127.0.0.1:PORT` (what `GOOGLE_GEMINI_BASE_URL` is set to).
    pub base: String,
    requests: Arc<Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for GeminiStandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl GeminiStandIn {
    /// Starts a stand-in playing `script` on a free loopback port.
    pub async fn start(script: impl Fn(&[String]) -> Turn + Send + Sync + 'static) -> GeminiStandIn {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let shared = Shared { script: Arc::new(script), requests: requests.clone() };
        let app = Router::new().fallback(answer).with_state(shared);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        GeminiStandIn { base, requests, task }
    }

    /// Every request body received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

/// The tool results of a request's `contents`, oldest first, as text: a result's `output` without the
/// `<untrusted_context>` wrapper Gemini CLI puts around what a tool returned, or its `error`.
fn tool_results(body: &Value) -> Vec<String> {
    let parts = body["contents"].as_array().into_iter().flatten().flat_map(|c| c["parts"].as_array().into_iter().flatten());
    let responses = parts.filter_map(|part| part.get("functionResponse"));
    responses
        .map(|response| match (&response["response"]["output"], &response["response"]["error"]) {
            (Value::String(output), _) => {
                let inner = output.trim().strip_prefix("<untrusted_context>").and_then(|o| o.strip_suffix("</untrusted_context>"));
                inner.unwrap_or(output).trim().to_owned()
            }
            (_, Value::String(error)) => error.clone(),
            _ => response["response"].to_string(),
        })
        .collect()
}

async fn answer(State(shared): State<Shared>, uri: Uri, body: String) -> Response {
    let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    shared.requests.lock().unwrap().push(json!({"path": uri.path(), "body": body}));
    let usage = json!({"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120});
    let path = uri.path();
    if path.ends_with(":countTokens") {
        return axum::Json(json!({"totalTokens": 100})).into_response();
    }
    if path.ends_with(":generateContent") {
        let text = json!({
            "reasoning": "scripted", "model_choice": "flash", "next_speaker": "user",
            "complexity_reasoning": "scripted", "complexity_score": 1,
        }).to_string();
        let candidate = json!({"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0});
        return axum::Json(json!({"candidates": [candidate], "usageMetadata": usage})).into_response();
    }
    if !path.ends_with(":streamGenerateContent") {
        return (StatusCode::NOT_FOUND, format!("the stand-in does not serve {path}")).into_response();
    }
    let has_tools = body["tools"].as_array().is_some_and(|tools| !tools.is_empty());
    let turn = if has_tools { (shared.script)(&tool_results(&body)) } else { Turn::Text("cairn".into()) };
    let part = match turn {
        Turn::Call { server, tool, args } => json!({"functionCall": {"name": format!("mcp_{server}_{tool}"), "args": args}}),
        Turn::Text(text) => json!({"text": text}),
    };
    let chunk = json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": usage,
    });
    ([(header::CONTENT_TYPE, "text/event-stream")], Body::from(format!("data: {chunk}\n\n"))).into_response()
}
