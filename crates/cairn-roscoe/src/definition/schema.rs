//! The JSON Schema (2020-12) of the workflow format and the schema stage of validation.
//!
//! The schema file (`schema/workflow.schema.json`) is what `get_workflow_schema` returns. It checks shape only:
//! keys, types, id patterns, the nine node types and each type's config keys. Rules that need the whole graph
//! (targets exist, references, cycles) belong to integrity, in `validate`.

use std::sync::LazyLock;

use serde_json::Value;

use super::diagnostic::{Code, Diagnostic};

const SCHEMA: &str = include_str!("../../schema/workflow.schema.json");

static VALIDATOR: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
    let schema: Value = serde_json::from_str(SCHEMA).expect("workflow.schema.json is JSON");
    jsonschema::draft202012::new(&schema).expect("workflow.schema.json is a valid 2020-12 schema")
});

/// The workflow JSON Schema (draft 2020-12), as text.
pub fn schema() -> &'static str {
    SCHEMA
}

/// Every schema violation of a document, as `invalid_config` diagnostics (positions not yet filled).
pub(crate) fn check(value: &Value) -> Vec<Diagnostic> {
    let mut found: Vec<Diagnostic> = VALIDATOR
        .iter_errors(value)
        .map(|error| {
            let pointer = error.instance_path().as_str().to_owned();
            let node = node_of(&pointer);
            let place = if pointer.is_empty() {
                "workflow".to_owned()
            } else {
                dotted(&pointer)
            };
            let message = match &node {
                Some(id) => format!(
                    "node '{id}': {place}: {error}; fix the value to match the workflow schema"
                ),
                None => format!("{place}: {error}; fix the value to match the workflow schema"),
            };
            Diagnostic::new(Code::InvalidConfig, node.as_deref(), pointer, message)
        })
        .collect();
    found.dedup_by(|a, b| a.message == b.message);
    found
}

/// The node a pointer lies in: `/nodes/<id>/…` → `<id>`.
pub(crate) fn node_of(pointer: &str) -> Option<String> {
    let rest = pointer.strip_prefix("/nodes/")?;
    let id = rest.split('/').next()?;
    Some(id.replace("~1", "/").replace("~0", "~"))
}

/// `/nodes/a/config/prompt` → `nodes.a.config.prompt`.
fn dotted(pointer: &str) -> String {
    pointer
        .trim_start_matches('/')
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check_codes(value: Value) -> Vec<String> {
        check(&value)
            .into_iter()
            .map(|d| format!("{} {}", d.pointer, d.message))
            .collect()
    }

    #[test]
    fn schema_is_2020_12_and_compiles() {
        let parsed: Value = serde_json::from_str(schema()).unwrap();
        assert_eq!(
            parsed["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        LazyLock::force(&VALIDATOR);
    }

    #[test]
    fn minimal_workflow_passes() {
        let ok = json!({"name": "a", "initial": "x", "nodes": {"x": {"type": "ai_agent", "config": {"prompt": "hi"}}}});
        assert!(check_codes(ok).is_empty());
    }

    #[test]
    fn unknown_keys_and_types_fail() {
        let bad = json!({"initial": "x", "nodse": {}, "nodes": {"x": {"type": "agent"}}});
        let found = check_codes(bad);
        assert!(found.iter().any(|m| m.contains("nodse")), "{found:?}");
        assert!(
            found.iter().any(|m| m.starts_with("/nodes/x/type")),
            "{found:?}"
        );
    }

    #[test]
    fn per_type_config_keys_are_strict() {
        let bad = json!({"initial": "x", "nodes": {"x": {"type": "ai_judge", "config": {"prompt": "p", "choises": ["a"]}}}});
        let found = check(&bad);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].node.as_deref(), Some("x"));
        assert!(found[0].message.contains("node 'x'") && found[0].message.contains("choises"));
    }

    #[test]
    fn every_type_has_a_config_definition() {
        let parsed: Value = serde_json::from_str(schema()).unwrap();
        for t in super::super::NodeType::ALL {
            let def = &parsed["$defs"][format!("config_{}", t.as_str())]["properties"];
            for key in t.config_keys() {
                assert!(
                    def.get(key.name).is_some(),
                    "{} lacks {}",
                    t.as_str(),
                    key.name
                );
            }
            assert_eq!(
                def.as_object().unwrap().len(),
                t.config_keys().len(),
                "{}",
                t.as_str()
            );
        }
    }
}
