//! Hostile workflow text over MCP: an alias bomb, YAML nested too deep, and a condition nested far too deep are each
//! refused with an error that says which limit they broke, and the server goes on answering (before, the deep
//! condition overflowed the server's stack and killed it).

use serde_json::json;

use crate::support::*;

fn condition_workflow(expression: &str) -> String {
    format!(
        "name: w\ninitial: c\nnodes:\n  c:\n    type: condition\n    config: {{ expression: {} }}\n    transitions: {{ \"true\": $end, \"false\": $fail }}\n",
        serde_json::to_string(expression).unwrap()
    )
}

#[tokio::test]
async fn hostile_workflows_are_refused_clearly_and_the_server_lives_on() {
    let env = Env::new();
    let repo = env.repo("proj");
    let cwd = s(&repo);
    let client = env.connect().await;

    let mut laughs = String::from("name: w\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for pair in ["a", "b", "c", "d", "e", "f", "g", "h", "i"].windows(2) {
        laughs.push_str(&format!("{}: &{} [{}]\n", pair[1], pair[1], vec![format!("*{}", pair[0]); 9].join(", ")));
    }
    let deep_yaml = format!("name: w\nnodes: {}{}\n", "[".repeat(5000), "]".repeat(5000));
    let deep_condition = condition_workflow(&format!("{}true{}", "(".repeat(2000), ")".repeat(2000)));
    let long_condition = condition_workflow(&format!("a{}", " || a".repeat(5000)));
    for (yaml, says) in [
        (laughs, "alias bomb"),
        (deep_yaml, "levels deep"),
        (deep_condition, "nests brackets more than 32 deep"),
        (long_condition, "more than the 4096 allowed"),
    ] {
        let validated = client.ok("validate_workflow", json!({ "cwd": cwd, "yaml": yaml })).await;
        assert_eq!(validated["valid"], false, "{validated}");
        assert!(validated["errors"].to_string().contains(says), "{says}: {validated}");
        let created = client.fail("create_workflow", json!({ "cwd": cwd, "id": "w", "yaml": yaml })).await;
        assert!(created.to_string().contains(says), "{says}: {created}");
    }
    // Still serving, and a sensible condition is fine.
    let fine = client.ok("validate_workflow", json!({ "cwd": cwd, "yaml": condition_workflow("(1 + 2) * 3 == 9") })).await;
    assert_eq!(fine["valid"], true, "{fine}");
    client.close().await;
}
