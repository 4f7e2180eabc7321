//! Tool groups for hosts that put every tool into every model request: `roscoe mcp --tools runs` and
//! `/roscoe/mcp?tools=docs` list and answer only those groups' tools; an unknown group is refused with the groups
//! there are (exit 2 on the command line, `400` over HTTP).

use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;

use crate::support::*;

const RUNS: [&str; 15] = [
    "advance_consensus",
    "advance_map",
    "advance_round_robin",
    "advance_run",
    "cancel_run",
    "fork_run",
    "get_run_history",
    "get_run_status",
    "get_workflow_diagram",
    "list_runs",
    "list_workflows",
    "resume_run",
    "retry_run",
    "set_run_budget",
    "start_workflow",
];

async fn names(client: &Client) -> Vec<String> {
    let mut names: Vec<String> =
        client.service.list_all_tools().await.unwrap().into_iter().map(|t| t.name.into_owned()).collect();
    names.sort();
    names
}

#[tokio::test]
async fn roscoe_mcp_offers_only_the_groups_it_is_given() {
    let env = Env::new();
    let mut command = env.command(env!("CARGO_BIN_EXE_cairn"), &["roscoe"]);
    command.args(["--tools", "runs"]);
    let runs = Client::stdio(command).await;
    assert_eq!(names(&runs).await, RUNS);
    let refused = runs.call("create_workflow", json!({"global": true, "id": "w", "yaml": simple("w")})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("Unknown tool: 'create_workflow'"), "{refused:?}");
    assert!(!env.global_dir().join("w.yaml").exists(), "a tool outside the groups did nothing");
    runs.close().await;

    let mut command = env.command(env!("CARGO_BIN_EXE_roscoe"), &[]);
    command.args(["--tools", "skills,docs"]);
    let two = Client::stdio(command).await;
    // A skill import checks what it writes against the workflow schema.
    let expected = [
        "answer_docs",
        "ask_docs",
        "convert_skill",
        "finalize_skill_conversion",
        "get_doc",
        "get_workflow_schema",
        "list_docs",
        "list_skills",
        "search_docs",
        "validate_workflow",
    ];
    assert_eq!(names(&two).await, expected);
    two.close().await;
}

#[tokio::test]
async fn an_unknown_group_is_refused_with_the_groups_there_are() {
    let env = Env::new();
    let out = env.cli(env!("CARGO_BIN_EXE_roscoe"), &["mcp", "--tools", "runs,workflows"]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("\"workflows\"") && stderr.contains("runs, authoring, skills, docs, all"), "{stderr}");
}

#[tokio::test]
async fn the_http_endpoint_takes_the_groups_from_its_query() {
    let env = Env::new();
    let served = env.serve(&[], &[]).await;
    let transport = StreamableHttpClientTransport::from_uri(served.url("/roscoe/mcp?tools=docs"));
    let service = ().serve(transport).await.expect("initialize over HTTP");
    let mut listed: Vec<String> =
        service.list_all_tools().await.unwrap().into_iter().map(|t| t.name.into_owned()).collect();
    listed.sort();
    assert_eq!(listed, ["answer_docs", "ask_docs", "get_doc", "list_docs", "search_docs"]);
    service.cancel().await.unwrap();

    let answer = reqwest::Client::new()
        .post(served.url("/roscoe/mcp?tools=everything"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        .to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 400);
    let body: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(body["code"], "invalid_tool_groups", "{body}");
    assert!(body["error"].as_str().unwrap().contains("\"everything\""), "{body}");
}
