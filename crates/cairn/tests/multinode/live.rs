//! Live updates across nodes: an SSE client of node b sees a run advanced through node a, step by step, until it
//! ends. On Postgres the change crosses by LISTEN/NOTIFY; on SQLite (two processes on one file) by node b's poll.

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::support::{Client, Cluster};

/// The generous wait for each awaited event (never a measured duration).
const PATIENCE: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_run_advanced_through_one_node_streams_to_another_nodes_sse_client() {
    let cluster = Cluster::any();
    let (a, b) = (cluster.node("a").await, cluster.node("b").await);
    let agent = Client::http(&a.url("/roscoe/mcp"), None).await;
    let started = agent.ok("start_workflow", json!({"global": true, "id": "ship"})).await;
    let run_id = started["runId"].as_str().unwrap().to_owned();

    let response = reqwest::Client::new()
        .get(b.url(&format!("/api/runs/{run_id}/events?project=global")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut events =
        Events { body: Box::pin(response.bytes_stream().map(|chunk| chunk.map(|b| b.to_vec()))), buffer: String::new() };
    let first = events.until(|e| e["data"]["node"] == "draft").await;
    assert_eq!(first["data"]["status"], "paused", "{first}");

    let advanced = agent.ok("advance_run", json!({"global": true, "run_id": run_id, "node_id": "draft", "response": "a haiku"})).await;
    assert_eq!(advanced["pendingStep"]["nodeId"], "ask");
    let asked = events.until(|e| e["data"]["node"] == "ask").await;
    assert_eq!(asked["runId"], run_id.as_str());

    let decided = agent.ok("resume_run", json!({"global": true, "run_id": run_id, "transition": "ship"})).await;
    assert_eq!(decided["status"], "completed", "{decided}");
    let done = events.until(|e| e["data"]["status"] == "completed").await;
    assert_eq!(done["runId"], run_id.as_str());
    assert!(events.next().await.is_none(), "the stream ends with the run");
    agent.close().await;
}

/// The `state` events of an SSE response, as JSON.
struct Events {
    body: std::pin::Pin<Box<dyn futures::Stream<Item = reqwest::Result<Vec<u8>>> + Send>>,
    buffer: String,
}

impl Events {
    /// The next event's data; `None` when the stream ended.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let message: String = self.buffer.drain(..end + 2).collect();
                if let Some(data) = message.lines().find_map(|l| l.strip_prefix("data: ")) {
                    return Some(serde_json::from_str(data).expect("event data is JSON"));
                }
                continue;
            }
            let chunk = tokio::time::timeout(PATIENCE, self.body.next()).await.expect("the stream went quiet")?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk.expect("read the stream")));
        }
    }

    /// Skips events until one matches `wanted`; that event.
    async fn until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let event = self.next().await.expect("the stream ended before the awaited event");
            if wanted(&event) {
                return event;
            }
        }
    }
}
