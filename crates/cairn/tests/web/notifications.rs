//! Outbound run notifications, end to end: `cairn serve` with a `notify:` target in its global `roscoe.yaml` POSTs
//! to a receiver in the test when a run pauses at a human step and when it completes; the first attempt is answered
//! 500 and retried with the same delivery id; every attempt is signed with the secret from the server's environment
//! and shows on the run page. A Slack-format target filtered to one workflow's failures gets one line with the run's
//! link and nothing else. A project's `roscoe.yaml` naming a target starts nothing and sends nothing.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use tokio::process::Command;

use crate::cairn_serve::Served;
use crate::database::TestDatabase;
use crate::support::{DECIDE, Mcp, http, json_of, start_serving, token_as};

const SECRET: &str = "a-notify-secret";

/// One request the receiver got.
#[derive(Clone, Debug)]
struct Received {
    event: String,
    delivery: String,
    timestamp: String,
    signature: String,
    body: String,
}

impl Received {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// A local HTTP receiver at `POST /hook` that answers 500 to its first request and 200 to the rest: its URL and
/// what it got.
async fn receiver() -> (String, Arc<Mutex<Vec<Received>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<Received>>> = Arc::default();
    let kept = seen.clone();
    let hook = move |headers: HeaderMap, body: String| {
        let kept = kept.clone();
        async move {
            let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
            let mut seen = kept.lock().unwrap();
            seen.push(Received {
                event: header("x-roscoe-event"),
                delivery: header("x-roscoe-delivery"),
                timestamp: header("x-roscoe-timestamp"),
                signature: header("x-roscoe-signature-256"),
                body,
            });
            if seen.len() == 1 { StatusCode::INTERNAL_SERVER_ERROR } else { StatusCode::OK }
        }
    };
    let app = axum::Router::new().route("/hook", axum::routing::post(hook));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

/// Waits (up to a minute: a generous bound, not a timing claim) until `seen` holds `count` requests for `event`.
async fn requests_for(seen: &Mutex<Vec<Received>>, event: &str, count: usize) -> Vec<Received> {
    let begun = Instant::now();
    loop {
        let found: Vec<Received> = seen.lock().unwrap().iter().filter(|r| r.event == event).cloned().collect();
        if found.len() >= count {
            return found;
        }
        assert!(begun.elapsed() < Duration::from_secs(60), "{count} × {event} never arrived: {found:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether `request`'s signature is cairn's HMAC of its timestamp and body under [`SECRET`].
fn signed(request: &Received) -> bool {
    let timestamp: i64 = request.timestamp.parse().unwrap_or_else(|_| panic!("a timestamp: {request:?}"));
    let expected = cairn_roscoe::signature::sign(SECRET.as_bytes(), timestamp, request.body.as_bytes());
    cairn_roscoe::signature::matches(&expected, &request.signature)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_and_a_completed_run_notify_the_receiver_retried_signed_and_shown_on_the_run_page() {
    let (hook, seen) = receiver().await;
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    std::fs::write(home.join("workflows/decide.yaml"), DECIDE).unwrap();
    let config = format!("notify:\n  - url: {hook}\n    secret_env: ROSCOE_NOTIFY_SECRET\n");
    std::fs::write(home.join("roscoe.yaml"), config).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.arg("serve").env("CAIRN_HOME", &home).env("ROSCOE_NOTIFY_SECRET", SECRET).env_remove("ROSCOE_PUBLIC_URL");
    let database = TestDatabase::fresh();
    database.apply(&mut command);
    let served = Served::start(command).await;
    let client = http();
    let url = |p: &str| served.url(p);

    let started = json_of(client.post(url("/api/runs?project=global")).json(&json!({"workflowId": "decide"}))).await;
    let run_id = started["runId"].as_str().unwrap_or_else(|| panic!("{started}")).to_owned();
    let paused = requests_for(&seen, "run.paused_for_human", 2).await;
    assert_eq!(paused[0].delivery, paused[1].delivery, "a retry carries the same delivery id: {paused:?}");
    assert!(paused.iter().all(signed), "every attempt is signed with the secret: {paused:?}");
    let facts = paused[1].json();
    assert_eq!(facts["id"], paused[0].delivery.as_str(), "{facts}");
    assert_eq!(facts["event"], "run.paused_for_human", "{facts}");
    assert_eq!(facts["runId"], run_id.as_str(), "{facts}");
    assert_eq!((facts["workflowId"].as_str(), facts["status"].as_str()), (Some("decide"), Some("paused")), "{facts}");
    assert_eq!(facts["nodeId"], "ask", "{facts}");
    assert!(facts["prompt"].as_str().is_some_and(|p| p.starts_with("Go?")), "the step's prompt: {facts}");
    assert_eq!(facts["choices"], json!(["ship", "stop"]), "{facts}");
    let link = facts["url"].as_str().unwrap_or_default();
    assert!(link.ends_with(&format!("/open/runs/{run_id}?project=global")), "{facts}");

    let resumed = client
        .post(url(&format!("/api/runs/{run_id}/resume?project=global")))
        .json(&json!({"transition": "ship"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), 200);
    let completed = requests_for(&seen, "run.completed", 1).await;
    assert!(signed(&completed[0]), "{completed:?}");
    assert_ne!(completed[0].delivery, paused[0].delivery, "another event, another delivery");
    assert_eq!(completed[0].json()["status"], "completed");

    // The page reads the recorded attempts: the 500, then the 200, of the pause; the completion's one.
    let begun = Instant::now();
    let page = loop {
        let page = client.get(url(&format!("/runs/{run_id}?project=global"))).send().await.unwrap();
        let html = page.text().await.unwrap();
        if html.matches("HTTP 200").count() >= 2 {
            break html;
        }
        assert!(begun.elapsed() < Duration::from_secs(60), "the attempts never all showed: {html}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let section = &page[page.find(r#"id="notifications""#).expect("a Notifications section")..];
    let pause = &section[section.find(&format!(r#"data-delivery="{}""#, paused[0].delivery)).unwrap()..];
    let pause = &pause[..pause.find("</tr>").unwrap()];
    assert!(pause.contains("run.paused_for_human") && pause.contains("delivered"), "{pause}");
    let (first, second) = (pause.find("HTTP 500").unwrap(), pause.find("HTTP 200").unwrap());
    assert!(first < second && pause.contains(r#"data-attempt="2""#), "both attempts, in order: {pause}");
    assert!(section.contains("run.completed") && section.contains(&hook["http://".len()..hook.len() - "/hook".len()]));
    assert!(!section.contains("/hook"), "the target's host only, never its path: {section}");
    drop(served);
    drop(database);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_notify_section_starts_nothing_and_sends_nothing() {
    let (hook, seen) = receiver().await;
    let (env, repo) = start_serving("notified").await;
    std::fs::write(repo.join("roscoe.yaml"), format!("notify:\n  - url: {hook}\n")).unwrap();
    let roscoe = Mcp::connect(env.served.url("/roscoe/mcp"), &token_as(&env, "agent", "agent", "roscoe:run")).await;
    let Value::Object(args) = json!({"cwd": repo.to_string_lossy(), "id": "decide"}) else { unreachable!() };
    let call = rmcp::model::CallToolRequestParams::new("start_workflow").with_arguments(args);
    let answer = roscoe.0.call_tool(call).await.unwrap();
    let text = serde_json::to_string(&answer).unwrap();
    assert!(text.contains("invalid_config"), "{text}");
    assert!(text.contains("`notify` may be set only in the global roscoe.yaml"), "{text}");
    // Long enough for a queued delivery's first attempt (the outbox is read every 0.5 s): none may come.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(seen.lock().unwrap().is_empty(), "the project's target was never called");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slack_target_for_failures_of_one_workflow_gets_one_line_with_the_link() {
    let (hook, seen) = receiver().await;
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    std::fs::write(home.join("workflows/decide.yaml"), DECIDE).unwrap();
    std::fs::write(home.join("workflows/other.yaml"), DECIDE.replace("name: decide", "name: other")).unwrap();
    let target = "    events: [run.failed]\n    format: slack\n    workflows: [decide]\n";
    let config = format!("notify:\n  - url: {hook}\n{target}");
    std::fs::write(home.join("roscoe.yaml"), config).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.arg("serve").env("CAIRN_HOME", &home).env_remove("ROSCOE_PUBLIC_URL");
    let database = TestDatabase::fresh();
    database.apply(&mut command);
    let served = Served::start(command).await;
    let client = http();
    let mut runs = Vec::new();
    for workflow in ["other", "decide"] {
        let start = client.post(served.url("/api/runs?project=global")).json(&json!({"workflowId": workflow}));
        let started = json_of(start).await;
        let run_id = started["runId"].as_str().unwrap_or_else(|| panic!("{started}")).to_owned();
        let stop = client.post(served.url(&format!("/api/runs/{run_id}/resume?project=global")));
        assert_eq!(stop.json(&json!({"transition": "stop"})).send().await.unwrap().status(), 200);
        runs.push(run_id);
    }
    // The receiver answers 500 first, so the one failure of `decide` comes twice, and nothing else ever comes.
    let failed = requests_for(&seen, "run.failed", 2).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let all = seen.lock().unwrap().clone();
    assert!(all.iter().all(|r| r.event == "run.failed" && r.delivery == failed[0].delivery), "{all:?}");
    assert!(failed[0].signature.is_empty(), "no secret_env, no signature: {failed:?}");
    let text = failed[1].json()["text"].as_str().unwrap_or_default().to_owned();
    assert!(text.starts_with(&format!("roscoe: run {} of decide failed at ask", runs[1])), "{text}");
    assert!(text.ends_with(&format!("/open/runs/{}?project=global", runs[1])), "{text}");
    drop(served);
    drop(database);
}
