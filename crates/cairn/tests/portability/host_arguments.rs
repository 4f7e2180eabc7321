//! What hosts add to tool calls on their own: Gemini CLI sends `wait_for_previous` with every call, and checks an
//! error result's structured content against the tool's output schema. For every tool of the three stdio surfaces:
//! `wait_for_previous` is accepted and ignored, a genuinely unknown argument is still refused by name, and any
//! structured content a call answers (its errors' included) fits the tool's `outputSchema`.

use serde_json::{Value, json};

use crate::raw_stdio::RawStdio;
use crate::schemas::{call, servers, tools};

/// What in `result` (a tool's answer) breaks `tool`'s promises: structured content outside its output schema.
fn misfit(tool: &Value, result: &Value) -> Option<String> {
    let (schema, content) = (tool.get("outputSchema")?, result.get("structuredContent")?);
    let validator = jsonschema::validator_for(schema).expect("the output schema compiles");
    let errors: Vec<String> = validator.iter_errors(content).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    (!errors.is_empty()).then(|| errors.join("; "))
}

#[tokio::test]
async fn every_tool_ignores_wait_for_previous_refuses_unknown_arguments_and_its_errors_fit_its_output_schema() {
    let home = tempfile::tempdir().unwrap();
    let mut problems = Vec::new();
    for (surface, command) in servers(home.path()) {
        let mut server = RawStdio::start(command).await;
        let mut id = 10;
        for tool in tools(&mut server).await {
            let name = tool["name"].as_str().unwrap().to_owned();
            id += 2;
            let answered = call(&mut server, id, &name, json!({"wait_for_previous": true})).await;
            let text = answered["content"][0]["text"].as_str().unwrap_or_default();
            if text.contains("wait_for_previous") {
                problems.push(format!("{surface}/{name} refused wait_for_previous: {text}"));
            }
            if let Some(misfit) = misfit(&tool, &answered) {
                problems.push(format!("{surface}/{name}: structuredContent outside its outputSchema: {misfit}"));
            }
            let refused = call(&mut server, id + 1, &name, json!({"wait_for_previous": false, "no_such_argument": 1})).await;
            let text = refused["content"][0]["text"].as_str().unwrap_or_default();
            if refused["isError"] != true || !text.contains("no_such_argument") {
                problems.push(format!("{surface}/{name} did not refuse an unknown argument by name: {refused}"));
            }
            if let Some(misfit) = misfit(&tool, &refused) {
                problems.push(format!("{surface}/{name}: its refusal's structuredContent is outside its outputSchema: {misfit}"));
            }
        }
        assert!(server.close().await, "{surface} closes");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
