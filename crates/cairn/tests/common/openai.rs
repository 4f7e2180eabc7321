//! A local stand-in for an OpenAI-compatible Chat Completions server (what OpenAI, Ollama, vLLM and LM Studio
//! serve): `POST /v1/chat/completions` answered by a scripted function of the last user message, with `usage`
//! (`prompt_tokens`, `completion_tokens`). Every request body and its `Authorization` header are kept for the test.

#![allow(dead_code, reason = "each test binary that includes this file uses part of it")]

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use serde_json::{Value, json};

/// The scripted model: (answer text, prompt tokens, completion tokens) for a prompt.
pub type Script = dyn Fn(&str) -> (String, u64, u64) + Send + Sync;

/// Every request so far: its body and its `Authorization` header.
type Requests = Arc<Mutex<Vec<(Value, Option<String>)>>>;

#[derive(Clone)]
struct Shared {
    script: Arc<Script>,
    requests: Requests,
}

/// A running stand-in; stops when dropped.
pub struct OpenAiStandIn {
    /// `http://127.0.0.1:PORT/v1` (what `OPENAI_BASE_URL` or a provider's `baseUrl` is set to).
    pub base: String,
    requests: Requests,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for OpenAiStandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl OpenAiStandIn {
    /// Starts a stand-in answering with `script` on a free loopback port.
    pub async fn start(script: impl Fn(&str) -> (String, u64, u64) + Send + Sync + 'static) -> OpenAiStandIn {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let shared = Shared { script: Arc::new(script), requests: requests.clone() };
        let app = Router::new().route("/v1/chat/completions", post(completions)).with_state(shared);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/v1", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        OpenAiStandIn { base, requests, task }
    }

    /// Every request so far: its body and its `Authorization` header.
    pub fn requests(&self) -> Vec<(Value, Option<String>)> {
        self.requests.lock().unwrap().clone()
    }
}

async fn completions(State(shared): State<Shared>, headers: HeaderMap, body: axum::body::Bytes) -> axum::Json<Value> {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
    shared.requests.lock().unwrap().push((body.clone(), auth));
    let prompt = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    let (text, prompt_tokens, completion_tokens) = (shared.script)(&prompt);
    axum::Json(json!({
        "id": "chatcmpl-stand-in",
        "object": "chat.completion",
        "model": body["model"],
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens },
    }))
}
