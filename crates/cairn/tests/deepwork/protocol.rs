//! Protocol-level behaviour: the tool list, project roots from the client, platforms, a clean stdout, legacy SSE.

use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use crate::support::*;

const TOOLS: [&str; 11] = [
    "get_workflows",
    "start_workflow",
    "finished_step",
    "abort_workflow",
    "go_to_step",
    "register_session_job",
    "get_session_job",
    "get_named_schemas",
    "get_review_instructions",
    "get_configured_reviews",
    "mark_review_as_passed",
];

#[tokio::test(flavor = "multi_thread")]
async fn tools_are_listed_with_strict_schemas() {
    let project = Project::new();
    for transport in [Transport::Stdio, Transport::Http] {
        let client = project.connect(transport).await;
        let tools = client.service.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, TOOLS);
        let start = tools.iter().find(|t| t.name == "start_workflow").unwrap();
        let schema = Value::Object((*start.input_schema).clone());
        assert_eq!(schema["additionalProperties"], json!(false));
        let mut required: Vec<&str> = schema["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        required.sort();
        assert_eq!(required, ["goal", "job_name", "workflow_name"]);
        assert!(start.output_schema.is_some());
        let info = client.service.peer_info().unwrap();
        assert_eq!(info.server_info.as_ref().unwrap().name, "deepwork");
        assert!(client.service.list_prompts(None).await.unwrap().prompts.is_empty());
        assert!(client.service.list_resources(None).await.unwrap().resources.is_empty());
        client.close().await;
    }
}

/// `schema` without its `description`s (DeepWork's tools/list has none; cairn's are its own words).
fn without_descriptions(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            Value::Object(map.iter().filter(|(k, _)| *k != "description").map(|(k, v)| (k.clone(), without_descriptions(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(without_descriptions).collect()),
        other => other.clone(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn input_schemas_are_shaped_as_deepworks() {
    let project = Project::new();
    let client = project.connect(Transport::Stdio).await;
    let tools = client.service.list_all_tools().await.unwrap();
    client.close().await;
    let schema = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        without_descriptions(&Value::Object((*tool.input_schema).clone()))
    };
    let none = json!({"type": "object", "additionalProperties": false, "properties": {}});
    assert_eq!(schema("get_workflows"), none);
    assert_eq!(schema("get_named_schemas"), none);
    let text = json!({"anyOf": [{"type": "string"}, {"type": "null"}], "default": null});
    let value = json!({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]});
    // The map arguments also carry `properties: {}`, which OpenAI's function calling asks of every object.
    assert_eq!(
        schema("start_workflow"),
        json!({"type": "object", "additionalProperties": false, "required": ["goal", "job_name", "workflow_name"],
            "properties": {"goal": {"type": "string"}, "job_name": {"type": "string"}, "workflow_name": {"type": "string"},
                "session_id": text,
                "inputs": {"anyOf": [{"type": "object", "properties": {}, "additionalProperties": value}, {"type": "null"}], "default": null},
                "agent_id": text}})
    );
    assert_eq!(
        schema("finished_step"),
        json!({"type": "object", "additionalProperties": false, "required": ["outputs"],
            "properties": {"outputs": {"type": "object", "properties": {}, "additionalProperties": value}, "session_id": text,
                "work_summary": text, "quality_review_override_reason": text, "agent_id": text}})
    );
    let files = json!({"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": null});
    assert_eq!(schema("get_review_instructions"), json!({"type": "object", "additionalProperties": false, "properties": {"files": files}}));
    for tool in &tools {
        let text = serde_json::to_string(&tool.input_schema).unwrap();
        assert!(!text.contains("$defs") && !text.contains("$ref"), "{}: {text}", tool.name);
        assert!(!text.contains(r#""type":["#), "nullable arguments are anyOf, not a type list: {}: {text}", tool.name);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn without_path_the_client_root_is_the_project() {
    let project = Project::new();
    let launch_dir = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.args(["deepwork", "serve"]).current_dir(launch_dir.path()).env("CAIRN_HOME", project.home.path());
    let uri = format!("file://{}", project.root().display().to_string().replace(' ', "%20"));
    let client = Client::stdio(command, TestClient { root: Some(uri) }).await;
    let started = client.ok("start_workflow", start("single", "only", "s1")).await;
    assert_eq!(started["begin_step"]["project_root"], project.root().display().to_string());
    assert!(project.state_file("s1", "state.json").exists(), "state lives under the client's root");
    assert!(!launch_dir.path().join(".deepwork/tmp/sessions").exists(), "not under the launch directory");
    client.close().await;

    // A client without roots gets the launch directory.
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.args(["deepwork", "serve"]).current_dir(project.dir.path()).env("CAIRN_HOME", project.home.path());
    let client = Client::stdio(command, TestClient::default()).await;
    let started = client.ok("start_workflow", start("single", "only", "s2")).await;
    assert_eq!(started["begin_step"]["project_root"], project.root().display().to_string());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn other_platforms_generate_session_ids() {
    let project = Project::new();
    let client = Client::stdio(project.command(&["--platform", "gemini"]), TestClient::default()).await;
    let started = client.ok("start_workflow", json!({"goal": "g", "job_name": "single", "workflow_name": "only"})).await;
    let sid = started["begin_step"]["session_id"].as_str().unwrap().to_owned();
    assert!(sid.len() == 32 && sid.chars().all(|c| c.is_ascii_hexdigit()), "{sid}");
    let state = project.dir.path().join(".deepwork/tmp/sessions/gemini").join(format!("session-{sid}/state.json"));
    assert!(state.exists());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn stdout_carries_only_json_rpc() {
    let project = Project::new();
    let mut command = project.command(&[]);
    command.env("RUST_LOG", "debug").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_workflows", "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "start_workflow", "arguments": {"goal": "g", "job_name": "nope", "workflow_name": "w", "session_id": "s"}}}),
    ];
    for request in requests {
        stdin.write_all(format!("{request}\n").as_bytes()).await.unwrap();
    }
    // Give the server time to answer, then close its input so it exits.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    for line in lines {
        let message: Value = serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON-RPC: {line}"));
        assert_eq!(message["jsonrpc"], "2.0");
    }
    assert!(!output.stderr.is_empty(), "logs go to stderr");
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_sse_transport_serves_the_tools() {
    let project = Project::new();
    let port = free_port();
    let mut command = project.command(&["--transport", "sse", "--port", &port.to_string()]);
    command.stderr(Stdio::null()).kill_on_drop(true);
    let mut server = command.spawn().unwrap();
    wait_for_port(port).await;
    install_crypto();
    let http = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let response = http.get(format!("{base}/sse")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let mut events = Events::of(response);
    let (name, endpoint) = events.next().await.expect("the endpoint event");
    assert_eq!(name, "endpoint");
    assert!(endpoint.starts_with("/messages/?session_id="), "{endpoint}");
    let post = |body: Value| http.post(format!("{base}{endpoint}")).json(&body).send();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    assert_eq!(post(init).await.unwrap().status(), 202);
    let (name, data) = events.next().await.expect("the initialize answer");
    assert_eq!(name, "message");
    let reply: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(reply["result"]["serverInfo"]["name"], "deepwork");
    post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await.unwrap();
    post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await.unwrap();
    let (_, data) = events.next().await.expect("the tools/list answer");
    let reply: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(reply["result"]["tools"].as_array().unwrap().len(), TOOLS.len());
    let rejected = http.post(format!("{base}{endpoint}")).header("Host", "evil.example").body("{}").send().await.unwrap();
    assert_eq!(rejected.status(), 403);

    // SIGTERM with the client still connected: the server ends the stream and exits (it used to wait for the client).
    let pid = server.id().expect("the server runs").to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let bound = std::time::Duration::from_secs(60);
    let ended = tokio::time::timeout(bound, async { while events.next().await.is_some() {} }).await;
    assert!(ended.is_ok(), "the event stream ends after SIGTERM");
    let status = tokio::time::timeout(bound, server.wait()).await.expect("the server exits after SIGTERM").unwrap();
    assert!(status.success(), "{status}");
}
