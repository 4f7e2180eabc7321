//! Every tool of the three surfaces, as `tools/list` shows it over stdio from the real binaries, has an input schema
//! every host accepts: self-contained, one type per schema, `properties` on every object, the mandatory arguments
//! `required` and the others nullable (deepwork's also with `default: null`, as Pydantic writes them); and it passes
//! OpenAI's strict mode and Gemini's function declarations once derived the way their clients derive them, open maps
//! apart (listed here: neither subset can express them, and hosts send those tools in full JSON Schema).

use serde_json::{Value, json};
use tokio::process::Command;

use crate::raw_stdio::RawStdio;
use crate::{gemini, openai_strict};

/// The arguments that are open maps (names chosen by a job or workflow), by surface, tool and path.
const OPEN_MAPS: &[(&str, &str, &str)] = &[
    ("deepwork", "start_workflow", ".inputs|0"),
    ("deepwork", "finished_step", ".outputs"),
    ("roscoe", "create_workflow", ".config|0"),
    ("roscoe", "update_workflow", ".config|0"),
    ("roscoe", "validate_workflow", ".config|0"),
    ("roscoe", "lint_workflow", ".config|0"),
    ("roscoe", "get_workflow_diagram", ".config|0"),
    ("roscoe", "start_workflow", ".input|0"),
    ("roscoe", "advance_round_robin", ".verdicts|0"),
    ("roscoe", "test_workflow", ".config|0"),
    ("roscoe", "test_workflow", ".input|0"),
    ("roscoe", "test_workflow", ".mocks|0"),
];

/// Each surface's stdio server, in a fresh `CAIRN_HOME`.
pub(crate) fn servers(home: &std::path::Path) -> Vec<(&'static str, Command)> {
    let binary = |name: &str, args: &[&str]| {
        let mut command = Command::new(std::path::Path::new(env!("CARGO_BIN_EXE_cairn")).with_file_name(name));
        command.args(args).env("CAIRN_HOME", home).current_dir(home);
        command
    };
    vec![
        ("deepwork", binary("deepwork", &["serve", "--path", "."])),
        ("roscoe", binary("roscoe", &["mcp"])),
        ("work", binary("cairn", &["work", "mcp"])),
    ]
}

/// The tools a stdio server lists.
pub(crate) async fn tools(server: &mut RawStdio) -> Vec<Value> {
    server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string().as_bytes()).await;
    let answer = server.until_answered(&json!(1)).await.pop().unwrap();
    answer["result"]["tools"].as_array().cloned().unwrap_or_else(|| panic!("no tools: {answer}"))
}

/// What breaks the portable rules in `schema`, a tool's input schema on `surface`.
fn portable_violations(surface: &str, schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    if schema["type"] != "object" || schema["additionalProperties"] != false || !schema["properties"].is_object() {
        found.push("the root is not an object with properties and additionalProperties: false".to_owned());
    }
    let required: Vec<&Value> = schema["required"].as_array().into_iter().flatten().collect();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        let nullable = property["anyOf"].as_array().is_some_and(|v| v.contains(&json!({"type": "null"})));
        let null_default = property.get("default") == Some(&Value::Null);
        let optional_shape = nullable && (null_default || surface != "deepwork");
        if !(required.contains(&&json!(name)) || optional_shape) {
            found.push(format!(".{name}: optional but not nullable (deepwork: with default null)"));
        }
    }
    walk(schema, "", &mut found);
    found
}

fn walk(node: &Value, path: &str, found: &mut Vec<String>) {
    let Value::Object(map) = node else { return };
    for key in ["$ref", "$defs", "$schema", "definitions", "oneOf", "allOf", "const"] {
        if map.contains_key(key) {
            found.push(format!("{path}: `{key}`"));
        }
    }
    match map.get("type") {
        Some(Value::String(_)) => {}
        None if map.contains_key("anyOf") => {}
        other => found.push(format!("{path}: needs one type (or anyOf), has {other:?}")),
    }
    if map.get("type") == Some(&json!("object")) && !map.contains_key("properties") {
        found.push(format!("{path}: an object without properties"));
    }
    for (name, property) in map.get("properties").and_then(Value::as_object).into_iter().flatten() {
        walk(property, &format!("{path}.{name}"), found);
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child @ Value::Object(_)) = map.get(key) {
            walk(child, &format!("{path}[{key}]"), found);
        }
    }
    for (i, variant) in map.get("anyOf").and_then(Value::as_array).into_iter().flatten().enumerate() {
        walk(variant, &format!("{path}|{i}"), found);
    }
}

#[tokio::test]
async fn every_tool_schema_is_portable_and_passes_openai_strict_mode_and_gemini() {
    let home = tempfile::tempdir().unwrap();
    let mut problems = Vec::new();
    let mut open_maps = Vec::new();
    let mut counted = 0;
    for (surface, command) in servers(home.path()) {
        let mut server = RawStdio::start(command).await;
        let listed = tools(&mut server).await;
        assert!(!listed.is_empty(), "{surface} lists tools");
        for tool in listed {
            counted += 1;
            let name = tool["name"].as_str().unwrap().to_owned();
            let schema = &tool["inputSchema"];
            for problem in portable_violations(surface, schema) {
                problems.push(format!("{surface} {name} (portable) {problem}"));
            }
            let (strict, maps) = openai_strict::strict_form(schema);
            for problem in openai_strict::violations(&strict, &maps) {
                problems.push(format!("{surface} {name} (OpenAI strict) {problem}"));
            }
            let (parameters, gemini_maps) = gemini::parameters(schema);
            if let Some(parameters) = parameters {
                for problem in gemini::violations(&parameters, &gemini_maps) {
                    problems.push(format!("{surface} {name} (Gemini) {problem}"));
                }
            }
            // Both subsets stop at the same places: the open maps, each the object branch of an argument or the
            // argument itself.
            let mut gemini_maps = gemini_maps;
            gemini_maps.sort();
            let mut maps = maps;
            maps.sort();
            assert_eq!(maps, gemini_maps, "{surface} {name}");
            open_maps.extend(maps.into_iter().map(|path| (surface, name.clone(), path)));
        }
        assert!(server.close().await, "{surface} exits cleanly: {}", server.log());
    }
    assert!(counted > 50, "the three surfaces list {counted} tools");
    assert_eq!(problems, Vec::<String>::new());
    let expected: Vec<(&str, String, String)> = OPEN_MAPS.iter().map(|(s, t, p)| (*s, (*t).to_owned(), (*p).to_owned())).collect();
    assert_eq!(open_maps.len(), expected.len(), "{open_maps:?}");
    for map in &expected {
        assert!(open_maps.contains(map), "{map:?} is an open map; found {open_maps:?}");
    }
}

#[tokio::test]
async fn the_work_tools_mark_their_mandatory_arguments_required() {
    let home = tempfile::tempdir().unwrap();
    let (_, command) = servers(home.path()).pop().unwrap();
    let mut server = RawStdio::start(command).await;
    let required: Vec<(String, Value)> =
        tools(&mut server).await.iter().map(|t| (t["name"].as_str().unwrap().to_owned(), t["inputSchema"]["required"].clone())).collect();
    let expected = [
        ("work_create", json!(["space_id", "title"])),
        ("work_claim", json!(["claimant", "item_id"])),
        ("work_claim_next", json!(["claimant", "space_id"])),
        ("work_heartbeat", json!(["claimant", "item_id"])),
        ("work_update", json!(["item_id"])),
        ("work_handoff", json!(["item_id", "note"])),
        ("work_list", Value::Null),
        ("work_get", json!(["item_id"])),
        ("work_ready", json!(["space_id"])),
        ("work_record_evidence", json!(["commit", "kind", "pull_requests", "repository"])),
        ("work_status", json!(["document_id", "space_id"])),
        ("decisions_list_spaces", Value::Null),
        ("decisions_create_space", json!(["name"])),
        ("decisions_list_documents", json!(["space_id"])),
        ("decisions_get_document", json!(["document_id", "space_id"])),
        ("decisions_create_document", json!(["space_id", "title"])),
        ("decisions_update_document", json!(["base_version", "document_id", "space_id"])),
    ];
    let expected: Vec<(String, Value)> = expected.into_iter().map(|(n, r)| (n.to_owned(), r)).collect();
    assert_eq!(required, expected);
    assert!(server.close().await);
}

/// One `tools/call` on `server`: its result.
pub(crate) async fn call(server: &mut RawStdio, id: u64, name: &str, arguments: Value) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    server.send(request.to_string().as_bytes()).await;
    server.until_answered(&json!(id)).await.pop().unwrap()["result"].clone()
}

#[tokio::test]
async fn a_strict_host_sends_null_for_every_argument_it_leaves_out_and_the_tools_read_it_as_not_given() {
    let home = tempfile::tempdir().unwrap();
    let (_, command) = servers(home.path()).pop().unwrap();
    let mut server = RawStdio::start(command).await;
    let space = call(&mut server, 2, "decisions_create_space", json!({"account_id": null, "name": "hosts", "description": null})).await;
    assert_eq!(space["isError"], false, "{space}");
    let space_id = space["structuredContent"]["space"]["id"].clone();
    let item = call(
        &mut server,
        3,
        "work_create",
        json!({"space_id": space_id, "title": "Strict hosts", "notes": null, "links": null, "document_id": null}),
    )
    .await;
    assert_eq!(item["isError"], false, "{item}");
    let item_id = item["structuredContent"]["item"]["id"].clone();
    let claimed = call(&mut server, 4, "work_claim", json!({"account_id": null, "item_id": item_id, "claimant": "codex"})).await;
    assert_eq!(claimed["structuredContent"]["item"]["claimant"], "codex", "{claimed}");

    // A mandatory argument left out (or null) is named in the error, and nothing changes.
    let refused = call(&mut server, 5, "work_handoff", json!({"item_id": item_id, "note": null, "to": null, "account_id": null})).await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(refused["content"][0]["text"].as_str().unwrap().contains("missing field `note`"), "{refused}");
    let listed = call(&mut server, 6, "work_list", json!({"state": null, "page_size": null, "claimed_by": "codex"})).await;
    assert_eq!(listed["structuredContent"]["items"][0]["state"], "claimed", "{listed}");
    assert!(server.close().await);
}
