//! `get_workflow_schema`: the four fields, the nine executors, and the models of the global and project
//! `roscoe.yaml`.

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn the_schema_lists_executors_and_the_models_in_scope() {
    let env = Env::new();
    let repo = env.repo("proj");
    let client = env.connect().await;

    let info = client.ok("get_workflow_schema", json!({"global": true})).await;
    let mut fields: Vec<&str> = info.as_object().unwrap().keys().map(String::as_str).collect();
    fields.sort();
    assert_eq!(fields, ["authoring", "executors", "jsonSchema", "models"]);
    assert_eq!(info["jsonSchema"]["$schema"], "https://json-schema.org/draft/2020-12/schema");
    let types: Vec<&str> = info["executors"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["script", "condition", "ai_agent", "ai_judge", "consensus", "round_robin", "map", "human", "subworkflow"]
    );
    for executor in info["executors"].as_array().unwrap() {
        assert!(executor["configKeys"].as_array().is_some_and(|k| !k.is_empty()), "{executor}");
    }
    assert!(info["authoring"].as_array().is_some_and(|a| a.len() >= 8));
    // No roscoe.yaml anywhere: the built-in models.
    assert_eq!(info["models"]["default"], "claude-sonnet-4-5");

    // The global file applies in both scopes; the project's replaces it in project scope.
    std::fs::write(env.home().join("roscoe.yaml"), "models:\n  default: g-one\n  available: [g-one, g-two]\n").unwrap();
    std::fs::write(repo.join("roscoe.yaml"), "models:\n  default: p-one\n  available: [p-one]\n").unwrap();
    let global = client.ok("get_workflow_schema", json!({"global": true})).await;
    assert_eq!(global["models"], json!({"available": ["g-one", "g-two"], "default": "g-one"}));
    let project = client.ok("get_workflow_schema", json!({"cwd": s(&repo)})).await;
    assert_eq!(project["models"], json!({"available": ["p-one"], "default": "p-one"}));

    // A file that does not parse is reported as `models: { error }`, not as a failed call.
    std::fs::write(repo.join("roscoe.yaml"), "models: [").unwrap();
    let broken = client.ok("get_workflow_schema", json!({"cwd": s(&repo)})).await;
    assert!(broken["models"]["error"].as_str().unwrap().contains("roscoe.yaml"), "{broken}");
    client.close().await;
}
