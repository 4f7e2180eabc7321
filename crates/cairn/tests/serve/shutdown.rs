//! Graceful shutdown: SIGTERM arrives while a tool call is in flight. The server stops taking connections at once,
//! the call still gets its answer, and then the server exits cleanly.

use std::path::Path;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;
use tokio::process::Command;

use crate::cairn_serve::Served;
use crate::database::TestDatabase;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_in_flight_when_sigterm_arrives_still_gets_its_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let (started, release) = (tmp.path().join("started"), tmp.path().join("release"));
    // A script step that waits for the test to let it finish.
    let script = format!(
        "touch '{}' && while [ ! -e '{}' ]; do sleep 0.05; done",
        started.display(),
        release.display()
    );
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    std::fs::write(
        home.join("workflows/slow.yaml"),
        format!("name: slow\ninitial: wait\nnodes:\n  wait:\n    type: script\n    config: {{ command: {script:?} }}\n    transitions: {{ success: $end }}\n"),
    )
    .unwrap();
    let database = TestDatabase::fresh();
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.arg("serve").env("CAIRN_HOME", &home);
    database.apply(&mut command);
    let mut served = Served::start(command).await;

    let client = ().serve(StreamableHttpClientTransport::from_uri(served.url("/roscoe/mcp"))).await.unwrap();
    let call = tokio::spawn(async move {
        let args = json!({"global": true, "id": "slow"}).as_object().unwrap().clone();
        let result = client.call_tool(CallToolRequestParams::new("start_workflow").with_arguments(args)).await;
        let _ = client.cancel().await;
        result
    });
    eventually("the script to start", || started.exists()).await;

    served.signal("TERM");
    let healthz = served.url("/healthz");
    let mut refused = false;
    let deadline = Instant::now() + Duration::from_secs(60);
    while !refused {
        assert!(Instant::now() < deadline, "the stopping server kept taking connections");
        refused = reqwest::get(&healthz).await.is_err();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    touch(&release);

    // Generous: the answer comes as soon as the script ends; without a drain it never comes.
    let answered = tokio::time::timeout(Duration::from_secs(60), call).await;
    let result = answered.expect("the call in flight is answered").unwrap().expect("the call in flight is answered");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let answer = result.structured_content.expect("structured content");
    assert_eq!(answer["status"], "completed", "{answer}");
    assert!(served.exited().await.success(), "cairn serve exits cleanly after SIGTERM");
}

fn touch(path: &Path) {
    std::fs::write(path, "").unwrap();
}

/// Waits (up to a minute) until `check` holds.
async fn eventually(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
