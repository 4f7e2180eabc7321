//! A key written twice in one mapping of a workflow (`description: one` … `description: two`) is an `invalid_config`
//! naming the key and both lines (§5), wherever roscoe reads the workflow: validate, lint, create, update, get, list,
//! start, test and skill finalization. Nothing is written and nothing runs.

use std::fs;

use serde_json::{Value, json};

use crate::support::*;

/// A valid one-script workflow whose `description` is given twice (lines 2 and 9); the script leaves `marker`.
fn repeated(name: &str, marker: &std::path::Path) -> String {
    format!(
        "name: {name}\ndescription: one\ninitial: step\nnodes:\n  step:\n    type: script\n    config: {{ command: \"touch {}\" }}\n    transitions: {{ success: $end, failure: $fail }}\ndescription: two\n",
        marker.display()
    )
}

/// Whether `text` names the repeated key and both of its lines.
fn names_both(text: &str) -> bool {
    text.contains("'description' appears twice") && text.contains("line 2 column 1") && text.contains("line 9 column 1")
}

fn any_names_both(list: &Value) -> bool {
    list.as_array().is_some_and(|items| items.iter().any(|i| i.as_str().is_some_and(names_both)))
}

#[tokio::test]
async fn a_repeated_key_is_invalid_config_everywhere_a_workflow_is_read() {
    let env = Env::new();
    let repo = env.repo("proj");
    let cwd = s(&repo);
    let marker = repo.join("ran");
    let yaml = repeated("dup", &marker);
    let client = env.connect().await;

    // Given inline.
    let validated = client.ok("validate_workflow", json!({ "cwd": cwd, "yaml": yaml })).await;
    assert_eq!((validated["valid"].clone(), validated["code"].clone()), (json!(false), json!("invalid_config")), "{validated}");
    assert!(any_names_both(&validated["errors"]), "{validated}");
    let linted = client.ok("lint_workflow", json!({ "cwd": cwd, "yaml": yaml })).await;
    assert!(any_names_both(&linted["errors"]), "{linted}");
    let created = client.fail("create_workflow", json!({ "cwd": cwd, "id": "dup", "yaml": yaml })).await;
    assert_eq!(created["code"], "invalid_config", "{created}");
    assert!(any_names_both(&created["details"]), "{created}");
    assert!(!repo.join(".roscoe/workflows/dup.yaml").exists(), "nothing was written");
    let tested = client.ok("test_workflow", json!({ "cwd": cwd, "yaml": yaml })).await;
    assert_eq!(tested["code"], "invalid_config", "{tested}");
    assert!(any_names_both(&tested["details"]), "{tested}");

    // Update of a good workflow: refused, the file unchanged.
    let good = yaml.replace("description: two\n", "");
    client.ok("create_workflow", json!({ "cwd": cwd, "id": "dup", "yaml": good, "source": "repo" })).await;
    let path = repo.join(".roscoe/workflows/dup.yaml");
    let updated = client.fail("update_workflow", json!({ "cwd": cwd, "id": "dup", "yaml": yaml })).await;
    assert_eq!(updated["code"], "invalid_config", "{updated}");
    assert!(any_names_both(&updated["details"]), "{updated}");
    assert_eq!(fs::read_to_string(&path).unwrap(), good);

    // Stored on disk by hand: every reader reports it.
    fs::write(&path, &yaml).unwrap();
    let validated = client.ok("validate_workflow", json!({ "cwd": cwd, "id": "dup" })).await;
    assert!(any_names_both(&validated["errors"]), "{validated}");
    let linted = client.ok("lint_workflow", json!({ "cwd": cwd, "id": "dup" })).await;
    assert!(any_names_both(&linted["errors"]), "{linted}");
    let listed = client.ok("list_workflows", json!({ "cwd": cwd })).await;
    let entry = listed.as_array().unwrap().iter().find(|w| w["id"] == "dup").unwrap_or_else(|| panic!("{listed}"));
    assert!(entry["error"].as_str().is_some_and(names_both), "{listed}");
    let got = client.fail("get_workflow", json!({ "cwd": cwd, "id": "dup" })).await;
    assert_eq!(got["code"], "invalid_config", "{got}");
    assert!(any_names_both(&got["details"]), "{got}");
    let started = client.ok("start_workflow", json!({ "cwd": cwd, "id": "dup" })).await;
    assert_eq!(started["code"], "invalid_config", "{started}");
    assert!(any_names_both(&started["details"]), "{started}");
    let tested = client.ok("test_workflow", json!({ "cwd": cwd, "id": "dup" })).await;
    assert_eq!(tested["code"], "invalid_config", "{tested}");
    assert!(any_names_both(&tested["details"]), "{tested}");
    assert_eq!(client.ok("list_runs", json!({ "cwd": cwd })).await, json!([]), "no run was created");
    assert!(!marker.exists(), "the script never ran");

    // A skill conversion whose YAML repeats a key fails at its validate stage.
    let skill = repo.join("docs/solo.md");
    fs::create_dir_all(skill.parent().unwrap()).unwrap();
    fs::write(&skill, "---\nname: solo\ndescription: Do one thing\n---\nDo it.\n").unwrap();
    let completion = format!("```yaml\n{}```\n", repeated("solo", &marker));
    let finalized = client
        .fail("finalize_skill_conversion", json!({ "cwd": cwd, "completion": completion, "skill_path": s(&skill), "id": "solo" }))
        .await;
    assert_eq!((finalized["stage"].clone(), finalized["code"].clone()), (json!("validate"), json!("invalid_config")), "{finalized}");
    assert!(any_names_both(&finalized["details"]), "{finalized}");
    assert!(!repo.join(".roscoe/workflows/solo.yaml").exists());
    client.close().await;
}

#[tokio::test]
async fn a_repeated_nested_key_names_its_lines() {
    let env = Env::new();
    let repo = env.repo("proj");
    let client = env.connect().await;
    let yaml = "name: w\ninitial: a\nnodes:\n  a:\n    type: script\n    config: { command: ls }\n    transitions:\n      success: $end\n      success: $fail\n";
    let validated = client.ok("validate_workflow", json!({ "cwd": s(&repo), "yaml": yaml })).await;
    let errors = validated["errors"].to_string();
    assert!(errors.contains("'success' appears twice") && errors.contains("line 8") && errors.contains("line 9"), "{validated}");
    client.close().await;
}
