//! The protocol surface: the tool list under both entry names, server info, unknown tools, bad arguments, and the
//! scope errors every tool reports (`CWD_REQUIRED`, `CWD_GLOBAL_CONFLICT`, `CWD_INVALID`).

use serde_json::{Value, json};

use crate::support::*;

const TOOLS: [&str; 13] = [
    "list_workflows",
    "get_workflow",
    "create_workflow",
    "update_workflow",
    "delete_workflow",
    "list_workflow_references",
    "move_workflow",
    "duplicate_workflow",
    "rename_workflow",
    "get_workflow_schema",
    "validate_workflow",
    "lint_workflow",
    "get_workflow_diagram",
];

/// The run tools (seed "Run lifecycle" and "Run observability", plus `retry_run` and `set_run_budget`).
const RUN_TOOLS: [&str; 14] = [
    "start_workflow",
    "get_run_status",
    "advance_run",
    "advance_consensus",
    "advance_round_robin",
    "advance_map",
    "resume_run",
    "cancel_run",
    "fork_run",
    "retry_run",
    "set_run_budget",
    "list_runs",
    "get_run_history",
    "test_workflow",
];

/// The skill-import tools (scoped) and the docs tools (project-agnostic: no scope inputs).
const SKILL_TOOLS: [&str; 3] = ["list_skills", "convert_skill", "finalize_skill_conversion"];
const DOCS_TOOLS: [&str; 5] = ["list_docs", "get_doc", "search_docs", "ask_docs", "answer_docs"];

async fn tool_names(client: &Client) -> Vec<String> {
    let tools = client.service.list_all_tools().await.unwrap();
    for tool in &tools {
        if DOCS_TOOLS.contains(&tool.name.as_ref()) {
            continue;
        }
        let props = tool.input_schema.get("properties").and_then(Value::as_object).unwrap();
        assert!(props.contains_key("cwd") && props.contains_key("global"), "{}: no scope inputs", tool.name);
        assert!(tool.description.as_deref().is_some_and(|d| !d.is_empty()), "{}", tool.name);
    }
    let mut names: Vec<String> = tools.into_iter().map(|t| t.name.into_owned()).collect();
    names.sort();
    names
}

fn expected() -> Vec<String> {
    let all = TOOLS.iter().chain(&RUN_TOOLS).chain(&SKILL_TOOLS).chain(&DOCS_TOOLS);
    let mut names: Vec<String> = all.map(|t| (*t).to_owned()).collect();
    names.sort();
    names
}

#[tokio::test]
async fn both_entry_names_list_every_tool() {
    let env = Env::new();
    let cairn = env.connect().await;
    let info = cairn.service.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().map(|i| i.name.as_str()), Some("roscoe"));
    assert!(info.instructions.as_deref().is_some_and(|i| i.contains("cwd")));
    assert_eq!(tool_names(&cairn).await, expected());
    cairn.close().await;

    let roscoe = Client::stdio(env.command(env!("CARGO_BIN_EXE_roscoe"), &[])).await;
    assert_eq!(tool_names(&roscoe).await, expected());
    roscoe.close().await;
}

#[tokio::test]
async fn unknown_tools_and_bad_arguments_are_error_results() {
    let env = Env::new();
    let client = env.connect().await;
    let result = client.call("no_such_tool", json!({"global": true})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("Unknown tool: 'no_such_tool'"));

    let bad = client.fail("get_workflow", json!({"global": true, "id": "x", "bogus": 1})).await;
    assert_eq!(bad["code"], "invalid_input");
    assert!(bad["error"].as_str().unwrap().contains("unknown field `bogus`"));
    let bad = client.fail("get_workflow", json!({"global": true})).await;
    assert!(bad["error"].as_str().unwrap().contains("missing field `id`"), "{bad}");
    let bad = client.fail("list_workflows", json!({"global": true, "source": "elsewhere"})).await;
    assert_eq!(bad["code"], "invalid_input");
    // camelCase spellings of the snake_case inputs are accepted.
    client.ok("create_workflow", json!({"global": true, "id": "camel", "yaml": simple("camel")})).await;
    let renamed = client.ok("rename_workflow", json!({"global": true, "id": "camel", "newId": "humped"})).await;
    assert_eq!(renamed["id"], "humped", "{renamed}");
    client.close().await;
}

/// Minimal valid arguments (apart from the scope) for each tool.
fn args_for(tool: &str) -> Value {
    match tool {
        "list_workflows" | "get_workflow_schema" => json!({}),
        "create_workflow" | "update_workflow" => json!({"id": "w", "yaml": simple("w")}),
        "delete_workflow" => json!({"id": "w", "confirm": true}),
        "move_workflow" => json!({"id": "w", "to": "global"}),
        "duplicate_workflow" => json!({"id": "w", "to_id": "w2"}),
        "rename_workflow" => json!({"id": "w", "new_id": "w2"}),
        "validate_workflow" | "lint_workflow" | "get_workflow_diagram" => json!({"yaml": simple("w")}),
        "start_workflow" | "test_workflow" => json!({"id": "w"}),
        "list_runs" => json!({}),
        "advance_run" => json!({"run_id": "r", "response": "x"}),
        "resume_run" => json!({"run_id": "r", "transition": "x"}),
        "advance_consensus" | "advance_map" => json!({"run_id": "r", "responses": []}),
        "set_run_budget" => json!({"run_id": "r", "budget": {"usd": 1}}),
        "fork_run" => json!({"run_id": "r", "from_node_id": "a"}),
        "get_run_status" | "advance_round_robin" | "cancel_run" | "retry_run" | "get_run_history" => {
            json!({"run_id": "r"})
        }
        _ => json!({"id": "w"}),
    }
}

fn with(mut args: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        args[k] = v.clone();
    }
    args
}

#[tokio::test]
async fn every_tool_reports_the_scope_errors() {
    let env = Env::new();
    let repo = env.repo("proj");
    let file = repo.join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let client = env.connect().await;
    for tool in TOOLS.into_iter().chain(RUN_TOOLS) {
        let args = args_for(tool);
        let err = client.fail(tool, args.clone()).await;
        assert_eq!(err["code"], "CWD_REQUIRED", "{tool}");
        assert!(err.get("cwd").is_none(), "{tool}");
        let err = client.fail(tool, with(args.clone(), json!({"global": false}))).await;
        assert_eq!(err["code"], "CWD_REQUIRED", "{tool}: global false counts as absent");

        let err = client.fail(tool, with(args.clone(), json!({"cwd": s(&repo), "global": true}))).await;
        assert_eq!(err["code"], "CWD_GLOBAL_CONFLICT", "{tool}");
        assert_eq!(err["cwd"], s(&repo), "{tool}");

        for cwd in ["relative/dir".to_owned(), s(&repo.join("missing")), s(&file)] {
            let err = client.fail(tool, with(args.clone(), json!({"cwd": cwd}))).await;
            assert_eq!(err["code"], "CWD_INVALID", "{tool} {cwd}");
            assert_eq!(err["cwd"], cwd.as_str(), "{tool}");
        }
    }
    // Nothing was written by any refused call.
    assert!(!env.global_dir().exists());
    assert!(!repo.join(".roscoe").exists());
    client.close().await;
}
