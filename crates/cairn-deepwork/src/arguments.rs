//! The shapes of the deepwork tools' arguments, as DeepWork's `tools/list` shows them (spec `deepwork-tools.json`),
//! so a host sees the same input schemas from both: an optional argument is `{"anyOf": [T, {"type": "null"}],
//! "default": null}`, the values of `outputs` and `inputs` (a string, or a list of strings) are written out inline
//! (no `$defs`), and a tool without arguments has `"properties": {}`. The parameter structs name these with
//! `#[schemars(schema_with = …)]` and `#[schemars(transform = no_arguments)]`.
//!
//! Also the parsing of `outputs` and `inputs`: a value that is neither a string nor a list of strings is refused with
//! an error naming the argument and the key.

use indexmap::IndexMap;
use schemars::{Schema, SchemaGenerator, json_schema};
use serde::de::{Deserialize, Deserializer, Error};
use serde_json::Value;

/// Declares the params of a tool that acts on the active workflow of a session's stack: the fields written here,
/// then the optional `session_id` and `agent_id` that name the stack (in DeepWork's order).
macro_rules! stack_params {
    ($($(#[$fmeta:meta])* $field:ident: $ty:ty,)*) => {
        #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct Params {
            $($(#[$fmeta])* $field: $ty,)*
            /// The session id given to start_workflow (or returned by it).
            #[serde(default)]
            #[schemars(schema_with = "super::arguments::nullable_string")]
            session_id: Option<String>,
            /// Sub-agent id, when the workflow runs on an agent's own stack.
            #[serde(default)]
            #[schemars(schema_with = "super::arguments::nullable_string")]
            agent_id: Option<String>,
        }
    };
}
pub(super) use stack_params;

/// An optional string.
pub(super) fn nullable_string(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"anyOf": [{"type": "string"}, {"type": "null"}], "default": null})
}

/// An optional list of strings.
pub(super) fn nullable_strings(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": null})
}

/// Values by argument name, each a string or a list of strings.
pub(super) fn values(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "object", "additionalProperties": value_schema()})
}

/// Optional values by argument name.
pub(super) fn nullable_values(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "anyOf": [{"type": "object", "additionalProperties": value_schema()}, {"type": "null"}],
        "default": null,
    })
}

/// One value: a string (or a path), or a list of paths.
fn value_schema() -> Value {
    serde_json::json!({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]})
}

/// The schema of a tool without arguments: an object with no properties (and no description of its own).
pub(super) fn no_arguments(schema: &mut Schema) {
    schema.insert("properties".into(), Value::Object(Default::default()));
    schema.remove("description");
}

/// Parses `outputs`.
pub(super) fn outputs<'de, D: Deserializer<'de>>(deserializer: D) -> Result<IndexMap<String, Value>, D::Error> {
    checked("outputs", IndexMap::deserialize(deserializer)?)
}

/// Parses `inputs` (`null` or absent: none).
pub(super) fn inputs<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<IndexMap<String, Value>>, D::Error> {
    Option::<IndexMap<String, Value>>::deserialize(deserializer)?.map(|values| checked("inputs", values)).transpose()
}

/// `values` when each is a string or a list of strings, else an error naming `argument` and the first bad key.
fn checked<E: Error>(argument: &str, values: IndexMap<String, Value>) -> Result<IndexMap<String, Value>, E> {
    let fits = |value: &Value| match value {
        Value::String(_) => true,
        Value::Array(items) => items.iter().all(Value::is_string),
        _ => false,
    };
    match values.iter().find(|(_, value)| !fits(value)) {
        None => Ok(values),
        Some((key, value)) => Err(E::custom(format!(
            "argument `{argument}`, key `{key}`: the value must be a string or a list of strings, not {value}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Outputs {
        #[serde(deserialize_with = "outputs")]
        outputs: IndexMap<String, Value>,
        #[serde(default, deserialize_with = "inputs")]
        inputs: Option<IndexMap<String, Value>>,
    }

    fn parse(value: Value) -> Result<Outputs, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    #[test]
    fn strings_and_lists_of_strings_are_values() {
        let ok = parse(serde_json::json!({"outputs": {"a": "x", "b": ["y", "z"], "c": []}})).unwrap();
        assert_eq!(ok.outputs.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(ok.inputs, None);
        assert_eq!(parse(serde_json::json!({"outputs": {}, "inputs": null})).unwrap().inputs, None);
    }

    #[test]
    fn anything_else_names_the_argument_and_the_key() {
        assert_eq!(
            parse(serde_json::json!({"outputs": {"a": "x", "summary": 5}})).unwrap_err(),
            "argument `outputs`, key `summary`: the value must be a string or a list of strings, not 5"
        );
        assert_eq!(
            parse(serde_json::json!({"outputs": {}, "inputs": {"files": ["a", {"b": 1}]}})).unwrap_err(),
            "argument `inputs`, key `files`: the value must be a string or a list of strings, not [\"a\",{\"b\":1}]"
        );
        assert!(parse(serde_json::json!({"outputs": ["a"]})).unwrap_err().contains("expected a map"));
    }

    #[test]
    fn schemas_have_deepworks_shape() {
        let mut generator = SchemaGenerator::default();
        assert_eq!(
            nullable_values(&mut generator).as_value(),
            &serde_json::json!({"anyOf": [{"type": "object", "additionalProperties": {"anyOf": [{"type": "string"},
                {"type": "array", "items": {"type": "string"}}]}}, {"type": "null"}], "default": null})
        );
        let mut empty = json_schema!({"type": "object", "description": "No arguments.", "additionalProperties": false});
        no_arguments(&mut empty);
        assert_eq!(empty.as_value(), &serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}));
    }
}
