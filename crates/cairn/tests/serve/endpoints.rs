//! What `cairn serve` mounts: `/healthz` (and the database behind it), the roscoe tools at `/roscoe/mcp`, the DeepWork
//! tools at `/deepwork/mcp` only when `--project` is given, and the Host/Origin guard in front of all of them.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use tokio::process::Command;

use crate::cairn_serve::Served;
use crate::database::TestDatabase;

fn serve(home: &std::path::Path, database: &TestDatabase, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.arg("serve").args(extra).env("CAIRN_HOME", home);
    database.apply(&mut command);
    command
}

async fn tool_names(url: String) -> Vec<String> {
    let client = ().serve(StreamableHttpClientTransport::from_uri(url)).await.expect("initialize over HTTP");
    let tools = client.list_all_tools().await.expect("tools/list");
    let _ = client.cancel().await;
    tools.into_iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test]
async fn healthz_answers_once_the_database_is_open() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let database = TestDatabase::fresh();
    let served = Served::start(serve(&home, &database, &[])).await;
    let response = reqwest::get(served.url("/healthz")).await.unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body, json!({"status": "ok"}));
    if !database.is_postgres() {
        assert!(home.join("cairn.db").is_file(), "the default database is the SQLite file in CAIRN_HOME");
    }
}

#[tokio::test]
async fn roscoe_tools_are_served_and_deepwork_only_for_a_project() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let database = TestDatabase::fresh();
    let served = Served::start(serve(&home, &database, &[])).await;
    let roscoe = tool_names(served.url("/roscoe/mcp")).await;
    assert!(roscoe.iter().any(|t| t == "validate_workflow"), "{roscoe:?}");
    let missing = reqwest::Client::new().post(served.url("/deepwork/mcp")).body("{}").send().await.unwrap();
    assert_eq!(missing.status(), 404, "no /deepwork/mcp without --project");
    drop(served);

    let project = tmp.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let served = Served::start(serve(&home, &database, &["--project", project.to_str().unwrap()])).await;
    let deepwork = tool_names(served.url("/deepwork/mcp")).await;
    assert!(deepwork.iter().any(|t| t == "get_workflows"), "{deepwork:?}");

    // A DeepWork call answers for the project given on the command line.
    let client = ().serve(StreamableHttpClientTransport::from_uri(served.url("/deepwork/mcp"))).await.unwrap();
    let result = client.call_tool(CallToolRequestParams::new("get_workflows")).await.unwrap();
    assert_ne!(result.is_error, Some(true));
    let text: String = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    assert!(text.contains("deepwork_jobs"), "cairn's standard jobs are listed: {text}");
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_foreign_host_or_origin_is_refused_on_every_route() {
    let tmp = tempfile::tempdir().unwrap();
    let database = TestDatabase::fresh();
    let served = Served::start(serve(&tmp.path().join("home"), &database, &[])).await;
    let http = reqwest::Client::new();
    for path in ["/healthz", "/roscoe/mcp"] {
        let response = http.get(served.url(path)).header("Host", "evil.example").send().await.unwrap();
        assert_eq!(response.status(), 403, "{path}");
        let text = response.text().await.unwrap();
        assert!(text.contains("--allowed-host evil.example"), "{text}");
        let response =
            http.get(served.url(path)).header("Origin", "https://evil.example").send().await.unwrap();
        assert_eq!(response.status(), 403, "{path} with a foreign Origin");
    }
}

#[tokio::test]
async fn a_bad_database_url_stops_the_server_with_a_clear_message() {
    let tmp = tempfile::tempdir().unwrap();
    let database = TestDatabase::fresh();
    let output = serve(&tmp.path().join("home"), &database, &["--database-url", "mysql://db/cairn", "--addr", "127.0.0.1:0"])
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unsupported database URL"), "{stderr}");
}

/// A client of an older protocol (with a session) ends it with `DELETE`: the answer is `204`, one of the two the
/// official Python client takes as a session ended (200 and 204; it warns "Session termination failed: 202"
/// otherwise), and the session is gone. A posted notification is still `202 Accepted`.
#[tokio::test]
async fn ending_an_mcp_session_is_answered_no_content() {
    let tmp = tempfile::tempdir().unwrap();
    let database = TestDatabase::fresh();
    let served = Served::start(serve(&tmp.path().join("home"), &database, &[])).await;
    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let mut request = http
            .post(served.url("/roscoe/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-06-18")
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let response = post(initialize, None).await.unwrap();
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = response.text().await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(initialized, Some(&session)).await.unwrap().status(), 202, "notifications stay 202");

    let ended = http
        .delete(served.url("/roscoe/mcp"))
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), 204, "the Python client takes 200 or 204 as a session ended");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(post(list, Some(&session)).await.unwrap().status(), 404, "the session is gone");
}
