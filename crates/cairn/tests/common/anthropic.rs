//! A local stand-in for the Anthropic Messages API, for tests that run a real host (Claude Code) or cairn's own model
//! calls offline: `POST /v1/messages` answered by a scripted [`Model`], as one JSON message or, when the request asks
//! for `stream: true`, as the Server-Sent Events the API sends (`message_start`, `content_block_*` with `text_delta`
//! and `input_json_delta`, `message_delta`, `message_stop`). Every request body is kept for the test to inspect, with
//! the most requests it has answered at once and the requests whose caller hung up before the answer (a cancelled
//! call, observed by the stand-in itself).

#![allow(dead_code, reason = "each test binary that includes this file uses part of it")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// One content block of an answer.
#[derive(Debug, Clone)]
pub enum Block {
    /// Text.
    Text(String),
    /// A call of tool `name` with `input`.
    ToolUse { name: String, input: Value },
}

/// The usage an answer reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// `input_tokens` (without the cache's).
    pub input: u64,
    /// `output_tokens`.
    pub output: u64,
    /// `cache_read_input_tokens`.
    pub cache_read: u64,
    /// `cache_creation_input_tokens`.
    pub cache_creation: u64,
}

impl Usage {
    /// Usage without cache tokens.
    pub fn plain(input: u64, output: u64) -> Usage {
        Usage { input, output, cache_read: 0, cache_creation: 0 }
    }
}

/// What the stand-in answers to one request.
#[derive(Debug, Clone)]
pub enum Answer {
    /// An assistant message of these blocks (stop reason `tool_use` when one calls a tool), after `delay`, reporting
    /// `usage`.
    Message { blocks: Vec<Block>, usage: Usage, delay: Duration },
    /// An API error: `status` (429, 529 overloaded, 500 …) with the API's error body and, when given, `retry-after`
    /// in seconds.
    Error { status: u16, kind: &'static str, retry_after: Option<u64> },
}

impl Answer {
    /// A text answer with small usage figures.
    pub fn text(text: impl Into<String>) -> Answer {
        Answer::blocks(vec![Block::Text(text.into())])
    }

    /// A call of tool `name`.
    pub fn tool(name: impl Into<String>, input: Value) -> Answer {
        Answer::blocks(vec![Block::ToolUse { name: name.into(), input }])
    }

    /// An answer of `blocks`.
    pub fn blocks(blocks: Vec<Block>) -> Answer {
        Answer::Message { blocks, usage: Usage::plain(100, 20), delay: Duration::ZERO }
    }

    /// This answer reporting `usage` instead.
    pub fn with_usage(self, usage: Usage) -> Answer {
        match self {
            Answer::Message { blocks, delay, .. } => Answer::Message { blocks, usage, delay },
            error => error,
        }
    }

    /// This answer after `delay`.
    pub fn after(self, delay: Duration) -> Answer {
        match self {
            Answer::Message { blocks, usage, .. } => Answer::Message { blocks, usage, delay },
            error => error,
        }
    }
}

/// A request as the model sees it.
#[derive(Debug, Clone)]
pub struct Request {
    /// The JSON body.
    pub body: Value,
}

impl Request {
    /// Whether the host offered tools (requests without tools are side calls: titles, summaries).
    pub fn has_tools(&self) -> bool {
        self.body["tools"].as_array().is_some_and(|t| !t.is_empty())
    }

    /// Every text of the request (system prompt, messages, tool results), joined.
    pub fn all_text(&self) -> String {
        let mut out = String::new();
        collect_text(&self.body["system"], &mut out);
        collect_text(&self.body["messages"], &mut out);
        out
    }

    /// The text of the first user message (what started this conversation: the prompt, or a subagent's task).
    pub fn first_user_text(&self) -> String {
        let mut out = String::new();
        if let Some(first) = self.body["messages"].as_array().and_then(|m| m.iter().find(|m| m["role"] == "user")) {
            collect_text(&first["content"], &mut out);
        }
        out
    }

    /// The results of the tool calls answered so far, oldest first, as text.
    pub fn tool_results(&self) -> Vec<String> {
        let mut results = Vec::new();
        for message in self.body["messages"].as_array().into_iter().flatten() {
            for block in message["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_result" {
                    let mut text = String::new();
                    collect_text(&block["content"], &mut text);
                    results.push(text);
                }
            }
        }
        results
    }

    /// The last tool result, if any.
    pub fn last_tool_result(&self) -> Option<String> {
        self.tool_results().pop()
    }
}

fn collect_text(value: &Value, out: &mut String) {
    match value {
        Value::String(text) => {
            out.push_str(text);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|item| collect_text(item, out)),
        Value::Object(map) => {
            for key in ["text", "content"] {
                if let Some(inner) = map.get(key) {
                    collect_text(inner, out);
                }
            }
        }
        _ => {}
    }
}

/// The scripted model: the answer to each request.
pub trait Model: Send + Sync + 'static {
    /// The answer to `request`.
    fn answer(&self, request: &Request) -> Answer;
}

impl<F: Fn(&Request) -> Answer + Send + Sync + 'static> Model for F {
    fn answer(&self, request: &Request) -> Answer {
        self(request)
    }
}

#[derive(Clone)]
struct Shared {
    model: Arc<dyn Model>,
    requests: Arc<Mutex<Vec<Value>>>,
    next_id: Arc<AtomicUsize>,
    counts: Arc<Counts>,
}

/// Requests in flight, the most at once, and those abandoned by their caller.
#[derive(Default)]
struct Counts {
    now: AtomicUsize,
    most: AtomicUsize,
    dropped: AtomicUsize,
}

/// Counts one request in flight; a request dropped before it answered (its caller hung up) counts as dropped.
struct InFlight {
    counts: Arc<Counts>,
    answered: bool,
}

impl InFlight {
    fn new(counts: &Arc<Counts>) -> InFlight {
        let now = counts.now.fetch_add(1, Ordering::SeqCst) + 1;
        counts.most.fetch_max(now, Ordering::SeqCst);
        InFlight { counts: counts.clone(), answered: false }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.counts.now.fetch_sub(1, Ordering::SeqCst);
        if !self.answered {
            self.counts.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// A running stand-in; stops when dropped.
pub struct StandIn {
    /// `http://127.0.0.1:PORT` (what `ANTHROPIC_BASE_URL` is set to).
    pub base: String,
    requests: Arc<Mutex<Vec<Value>>>,
    counts: Arc<Counts>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl StandIn {
    /// Starts a stand-in answering with `model` on a free loopback port.
    pub async fn start(model: impl Model) -> StandIn {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let counts = Arc::new(Counts::default());
        let shared = Shared {
            model: Arc::new(model),
            requests: requests.clone(),
            next_id: Arc::new(AtomicUsize::new(1)),
            counts: counts.clone(),
        };
        let app = Router::new().route("/v1/messages", post(messages)).with_state(shared);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        StandIn { base, requests, counts, task }
    }

    /// Every request body received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }

    /// The most requests that were being answered at once.
    pub fn most_at_once(&self) -> usize {
        self.counts.most.load(Ordering::SeqCst)
    }

    /// How many requests their caller abandoned before the answer was sent.
    pub fn dropped(&self) -> usize {
        self.counts.dropped.load(Ordering::SeqCst)
    }
}

async fn messages(State(shared): State<Shared>, body: axum::body::Bytes) -> Response {
    let mut in_flight = InFlight::new(&shared.counts);
    let response = answer(&shared, body).await;
    in_flight.answered = true;
    response
}

async fn answer(shared: &Shared, body: axum::body::Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared.requests.lock().unwrap().push(body.clone());
    let stream = body["stream"] == true;
    let model = body["model"].as_str().unwrap_or("claude-stand-in").to_owned();
    let request = Request { body };
    let answer = {
        let model = shared.model.clone();
        tokio::task::spawn_blocking(move || model.answer(&request)).await.unwrap()
    };
    match answer {
        Answer::Error { status, kind, retry_after } => {
            let body = json!({"type": "error", "error": {"type": kind, "message": format!("stand-in {kind}")}});
            let mut response = (StatusCode::from_u16(status).unwrap(), axum::Json(body)).into_response();
            if let Some(seconds) = retry_after {
                response.headers_mut().insert("retry-after", seconds.to_string().parse().unwrap());
            }
            response
        }
        Answer::Message { blocks, usage, delay } => {
            if !delay.is_zero() {
                // tokio's timer ticks in milliseconds: even a zero sleep would wait for the next tick.
                tokio::time::sleep(delay).await;
            }
            let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
            let content: Vec<Value> = blocks
                .iter()
                .enumerate()
                .map(|(i, block)| match block {
                    Block::Text(text) => json!({"type": "text", "text": text}),
                    Block::ToolUse { name, input } => {
                        json!({"type": "tool_use", "id": format!("toolu_{id:04}_{i}"), "name": name, "input": input})
                    }
                })
                .collect();
            let stop = if blocks.iter().any(|b| matches!(b, Block::ToolUse { .. })) { "tool_use" } else { "end_turn" };
            let usage = json!({"input_tokens": usage.input, "output_tokens": usage.output,
                "cache_creation_input_tokens": usage.cache_creation, "cache_read_input_tokens": usage.cache_read});
            let message = json!({"id": format!("msg_{id:06}"), "type": "message", "role": "assistant", "model": model,
                "content": content, "stop_reason": stop, "stop_sequence": null, "usage": usage});
            if stream { sse(&message) } else { axum::Json(message).into_response() }
        }
    }
}

/// `message` as the API's event stream.
fn sse(message: &Value) -> Response {
    let mut events = Vec::new();
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"]["output_tokens"] = json!(1);
    events.push(("message_start", json!({"type": "message_start", "message": start})));
    for (index, block) in message["content"].as_array().unwrap().iter().enumerate() {
        let (opening, delta) = if block["type"] == "text" {
            (json!({"type": "text", "text": ""}), json!({"type": "text_delta", "text": block["text"]}))
        } else {
            let opening = json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}});
            (opening, json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}))
        };
        events.push(("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": opening})));
        events.push(("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": delta})));
        events.push(("content_block_stop", json!({"type": "content_block_stop", "index": index})));
    }
    let delta = json!({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": null},
        "usage": {"output_tokens": message["usage"]["output_tokens"]}});
    events.push(("message_delta", delta));
    events.push(("message_stop", json!({"type": "message_stop"})));
    let text: String = events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect();
    ([(header::CONTENT_TYPE, "text/event-stream"), (header::CACHE_CONTROL, "no-cache")], Body::from(text)).into_response()
}
