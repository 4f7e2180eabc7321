//! Input schemas every host accepts: the JSON Schema schemars generates for a parameter type, rewritten into the
//! plain subset that MCP hosts and model APIs (OpenAI function calling, Gemini function declarations) take as it is.
//!
//! - self-contained: every `$ref` is replaced by the definition it names (its own keywords, such as a description,
//!   kept), and `$defs`, `$schema` and `title` are dropped;
//! - one `type` per schema: `"type": ["string", "null"]` becomes `anyOf` of the type and `null`, the shape DeepWork
//!   and Pydantic use for nullable arguments;
//! - every object has `properties` (`{}` when it has none, as for a tool without arguments);
//! - an enum of documented unit variants (`oneOf` of `const`s) becomes `enum`, any other `oneOf` an `anyOf`, and a
//!   lone `const` a one-value `enum`;
//! - no Rust integer formats (`int64`, `uint`): hosts read `minimum` instead;
//! - a variant of an `anyOf` drops its own description when the union has one (the type's doc comment repeats what
//!   the argument's description says);
//! - each optional argument (one the root's `required` does not list) accepts `null`: hosts that must send every
//!   argument (OpenAI's strict mode, whose SDKs mark every property required) send `null` for the ones they leave
//!   out, and every surface reads `null` as "not given". [`Optional`] says whether it also writes `default: null`.

use serde_json::{Map, Value, json};

/// How an optional argument's schema reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Optional {
    /// `anyOf` with `null`, nothing more: leaving it out of `required` already says it may be left out.
    Nullable,
    /// `anyOf` with `null` and `default: null`, the shape Pydantic writes (DeepWork's).
    NullDefault,
}

/// The portable form of `schema`, a schemars root schema for a parameter type (an object).
pub(crate) fn input_schema(schema: Value, shape: Optional) -> Map<String, Value> {
    let Value::Object(mut root) = schema else { panic!("a parameter type's schema is an object") };
    let defs = match root.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    let Value::Object(mut root) = portable(Value::Object(root), &defs, &mut Vec::new()) else {
        unreachable!("an object stays an object")
    };
    let required: Vec<Value> = match root.get("required") {
        Some(Value::Array(names)) => names.clone(),
        _ => Vec::new(),
    };
    if let Some(Value::Object(properties)) = root.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            if !required.contains(&Value::String(name.clone())) {
                *property = optional(std::mem::take(property), shape);
            }
        }
    }
    root
}

/// `schema` with its references resolved against `defs` and rewritten as the module doc says, recursively.
/// `seen` holds the definitions being resolved, to refuse a type that contains itself.
fn portable(schema: Value, defs: &Map<String, Value>, seen: &mut Vec<String>) -> Value {
    let Value::Object(mut node) = schema else { return schema };
    if let Some(Value::String(reference)) = node.remove("$ref") {
        let name = reference.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("unexpected $ref {reference}"));
        assert!(!seen.iter().any(|s| s == name), "parameter type {name} contains itself: hosts need a finite schema");
        let definition = defs.get(name).unwrap_or_else(|| panic!("$ref to a missing definition {name}")).clone();
        seen.push(name.to_owned());
        let Value::Object(mut resolved) = portable(definition, defs, seen) else { panic!("definition {name} is not an object") };
        seen.pop();
        // The referring schema's own keywords (its description, its default) win over the definition's.
        for (key, value) in node {
            resolved.insert(key, portable(value, defs, seen));
        }
        return Value::Object(resolved);
    }
    node.remove("$schema");
    node.remove("title");
    if let Some(values) = node.get("oneOf").and_then(constants) {
        node.remove("oneOf");
        node.insert("type".into(), json!("string"));
        node.insert("enum".into(), Value::Array(values));
    }
    for (key, value) in node.iter_mut() {
        match key.as_str() {
            "properties" => {
                if let Value::Object(properties) = value {
                    for property in properties.values_mut() {
                        *property = portable(std::mem::take(property), defs, seen);
                    }
                }
            }
            "items" | "additionalProperties" => *value = portable(std::mem::take(value), defs, seen),
            "anyOf" | "oneOf" | "allOf" => {
                if let Value::Array(variants) = value {
                    for variant in variants.iter_mut() {
                        *variant = portable(std::mem::take(variant), defs, seen);
                    }
                }
            }
            _ => {}
        }
    }
    if node.contains_key("description") {
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(variants)) = node.get_mut(key) {
                for variant in variants.iter_mut().filter_map(Value::as_object_mut) {
                    variant.remove("description");
                }
            }
        }
    }
    if let Some(variants) = node.remove("oneOf") {
        node.insert("anyOf".into(), variants);
    }
    if let Some(value) = node.remove("const") {
        node.insert("enum".into(), json!([value]));
    }
    if matches!(node.get("type"), Some(Value::String(t)) if t == "integer" || t == "number") {
        node.remove("format");
    }
    if let Some(Value::Array(types)) = node.get("type").cloned() {
        return nullable_union(node, &types);
    }
    if node.get("type") == Some(&json!("object")) && !node.contains_key("properties") {
        node.insert("properties".into(), json!({}));
    }
    Value::Object(node)
}

/// The string constants of `variants` when every one is a string `const` (a documented unit enum), else `None`.
fn constants(variants: &Value) -> Option<Vec<Value>> {
    let Value::Array(variants) = variants else { return None };
    variants
        .iter()
        .map(|variant| match (variant.get("type"), variant.get("const")) {
            (Some(Value::String(t)), Some(value @ Value::String(_))) if t == "string" => Some(value.clone()),
            _ => None,
        })
        .collect()
}

/// A schema whose `type` is a list (`["string", "null"]`) as `anyOf` of one schema per type: the type's own keywords
/// (`items`, `properties`, `minimum` …) go with it, the annotations (`description`, `default`) stay outside.
fn nullable_union(mut node: Map<String, Value>, types: &[Value]) -> Value {
    node.remove("type");
    let mut outer = Map::new();
    for annotation in ["description", "default", "examples"] {
        if let Some(value) = node.remove(annotation) {
            outer.insert(annotation.into(), value);
        }
    }
    let variants: Vec<Value> = types
        .iter()
        .map(|t| match t.as_str() {
            Some("null") => json!({"type": "null"}),
            _ => {
                let mut variant = Map::new();
                variant.insert("type".into(), t.clone());
                variant.extend(node.clone());
                portable(Value::Object(variant), &Map::new(), &mut Vec::new())
            }
        })
        .collect();
    let mut union = Map::new();
    union.insert("anyOf".into(), Value::Array(variants));
    union.extend(outer);
    Value::Object(union)
}

/// An optional argument's schema: nullable (`anyOf` with `null` unless it already accepts `null`), with `default:
/// null` for [`Optional::NullDefault`] and without a `default: null` otherwise.
fn optional(schema: Value, shape: Optional) -> Value {
    let Value::Object(mut node) = schema else { return schema };
    let accepts_null = match node.get("anyOf") {
        Some(Value::Array(variants)) => variants.iter().any(|v| v.get("type") == Some(&json!("null"))),
        _ => false,
    };
    if !accepts_null {
        let mut outer = Map::new();
        if let Some(description) = node.remove("description") {
            outer.insert("description".into(), description);
        }
        node.remove("default");
        outer.insert("anyOf".into(), json!([Value::Object(node), {"type": "null"}]));
        node = outer;
    }
    match shape {
        Optional::NullDefault => {
            node.insert("default".into(), Value::Null);
        }
        Optional::Nullable => {
            if node.get("default") == Some(&Value::Null) {
                node.remove("default");
            }
        }
    }
    Value::Object(node)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_inlined_with_the_referring_description() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Params",
            "type": "object",
            "properties": {"to": {"description": "Where to.", "$ref": "#/$defs/Side"}},
            "required": ["to"],
            "$defs": {"Side": {"description": "A side.", "oneOf": [
                {"description": "Left.", "type": "string", "const": "left"},
                {"description": "Right.", "type": "string", "const": "right"}
            ]}}
        });
        let portable = Value::Object(input_schema(schema, Optional::NullDefault));
        assert_eq!(
            portable,
            json!({
                "type": "object",
                "properties": {"to": {"description": "Where to.", "type": "string", "enum": ["left", "right"]}},
                "required": ["to"]
            })
        );
    }

    #[test]
    fn nullable_types_become_any_of_null_and_optional_arguments_default_to_null() {
        let schema = json!({
            "type": "object",
            "properties": {
                "files": {"description": "Files.", "type": ["array", "null"], "items": {"type": "string"}, "default": null},
                "limit": {"type": ["integer", "null"], "format": "uint", "minimum": 0, "default": null},
                "name": {"description": "A name.", "type": "string", "default": ""},
                "id": {"type": "string"}
            },
            "required": ["id"],
            "additionalProperties": false
        });
        let portable = Value::Object(input_schema(schema, Optional::NullDefault));
        assert_eq!(
            portable["properties"],
            json!({
                "files": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "description": "Files.", "default": null},
                "limit": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}], "default": null},
                "name": {"description": "A name.", "anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
                "id": {"type": "string"}
            })
        );
    }

    #[test]
    fn nullable_arguments_leave_out_default_null_and_a_union_keeps_one_description() {
        let schema = json!({
            "type": "object",
            "properties": {
                "source": {"description": "Its source.", "anyOf": [{"$ref": "#/$defs/Source"}, {"type": "null"}], "default": null},
                "limit": {"type": ["integer", "null"], "default": 50}
            },
            "$defs": {"Source": {"description": "A source.", "type": "string", "enum": ["repo", "global"]}}
        });
        assert_eq!(
            Value::Object(input_schema(schema, Optional::Nullable))["properties"],
            json!({
                "source": {"description": "Its source.", "anyOf": [{"type": "string", "enum": ["repo", "global"]}, {"type": "null"}]},
                "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 50}
            })
        );
    }

    #[test]
    fn every_object_has_properties_maps_keep_their_value_schema() {
        let no_arguments = json!({"type": "object", "additionalProperties": false, "description": "No arguments."});
        assert_eq!(
            Value::Object(input_schema(no_arguments, Optional::Nullable)),
            json!({"type": "object", "additionalProperties": false, "description": "No arguments.", "properties": {}})
        );
        let map = json!({
            "type": "object",
            "properties": {"outputs": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Value"}}},
            "required": ["outputs"],
            "$defs": {"Value": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}}
        });
        assert_eq!(
            Value::Object(input_schema(map, Optional::Nullable))["properties"]["outputs"],
            json!({
                "type": "object",
                "additionalProperties": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
                "properties": {}
            })
        );
    }

    #[test]
    fn the_deepwork_shape_is_kept_as_it_is() {
        let deepwork = json!({
            "type": "object",
            "properties": {
                "goal": {"type": "string"},
                "session_id": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}
            },
            "required": ["goal"],
            "additionalProperties": false
        });
        assert_eq!(Value::Object(input_schema(deepwork.clone(), Optional::NullDefault)), deepwork);
    }

    #[test]
    fn a_type_that_contains_itself_is_refused() {
        let schema = json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Tree"}},
            "$defs": {"Tree": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Tree"}}}}
        });
        let outcome = std::panic::catch_unwind(|| input_schema(schema, Optional::NullDefault));
        let message = outcome.expect_err("refused");
        let text = message.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(text.contains("Tree contains itself"), "{text}");
    }
}
