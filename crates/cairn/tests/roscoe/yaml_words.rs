//! YAML 1.1's words that mean what they do not say: an unquoted `true:`, `on:` or `no:` key is a boolean and `~:` is
//! null, so such a key in a workflow is an `invalid_config` with the quoting that fixes it, in validate_workflow and
//! at the terminal (`roscoe workflows validate`); a text value written `no` fails the schema with the same advice.

use serde_json::{Value, json};

use crate::runs_support::write_workflow;
use crate::support::*;

/// A condition whose `true` transition key is unquoted (line 8).
const UNQUOTED: &str = "name: gate\ninitial: check\nnodes:\n  check:\n    type: condition\n    config: { expression: \"1 > 0\" }\n    transitions:\n      true: $end\n      \"false\": $fail\n";

/// Whether one of `errors` says `text`.
fn says(errors: &Value, text: &str) -> bool {
    errors.as_array().is_some_and(|all| all.iter().any(|e| e.as_str().is_some_and(|e| e.contains(text))))
}

#[tokio::test]
async fn a_key_or_a_text_read_as_a_boolean_is_refused_with_the_quoting_fix() {
    let env = Env::new();
    let repo = env.repo("proj");
    let cwd = s(&repo);
    let client = env.connect().await;

    let refused = client.ok("validate_workflow", json!({ "cwd": cwd, "yaml": UNQUOTED })).await;
    assert_eq!((refused["valid"].clone(), refused["code"].clone()), (json!(false), json!("invalid_config")), "{refused}");
    let fix = "line 8 column 7: the key `true` is read by YAML as the boolean true, not as the text 'true'; put it in \
               quotes: `\"true\":`";
    assert!(says(&refused["errors"], fix), "{refused}");

    let quoted = UNQUOTED.replace("      true:", "      \"true\":");
    let valid = client.ok("validate_workflow", json!({ "cwd": cwd, "yaml": quoted })).await;
    assert_eq!(valid["valid"], true, "quoted, the same workflow is valid: {valid}");

    let on = quoted.replace("\"false\": $fail", "on: $fail");
    let refused = client.ok("validate_workflow", json!({ "cwd": cwd, "yaml": on })).await;
    assert!(says(&refused["errors"], "the key `on` is read by YAML as the boolean true"), "{refused}");

    let prompt = "name: ask\ninitial: q\nnodes:\n  q:\n    type: human\n    config: { prompt: no }\n    transitions: { approve: $end }\n";
    let refused = client.ok("validate_workflow", json!({ "cwd": cwd, "yaml": prompt })).await;
    assert_eq!(refused["valid"], false, "{refused}");
    assert!(says(&refused["errors"], "(YAML reads the unquoted `no` as false; for the text, put it in quotes: \"no\")"), "{refused}");

    write_workflow(&repo, "gate", UNQUOTED);
    let cli = env.roscoe(&repo, &["workflows", "validate", "gate"]).await;
    assert_ne!(cli.code, 0, "{cli:?}");
    let said = format!("{}{}", cli.stdout, cli.stderr);
    assert!(said.contains(fix), "the terminal says the same: {said}");
}
