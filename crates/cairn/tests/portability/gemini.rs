//! Gemini function declarations: the `parameters` of a declaration take a subset of OpenAPI 3.0's Schema object
//! (type, format, title, description, nullable, enum, items, min/maxItems, properties, required, min/maxProperties,
//! min/maxLength, pattern, example, anyOf, propertyOrdering, default, minimum, maximum), with one type name per schema
//! and no `$ref`. Clients (Gemini CLI among them) drop `additionalProperties`, which the subset lacks, and send no
//! `parameters` for a function without arguments. The subset has no open maps (an object must list its properties),
//! so an object that allows additional properties is reported by path: such tools go to Gemini as full JSON Schema
//! (`parametersJsonSchema`), as Gemini CLI sends MCP tools.

use serde_json::{Map, Value};

use crate::subset::Subset;

/// The keywords of Gemini's Schema object.
const KEYWORDS: &[&str] = &[
    "type", "format", "title", "description", "nullable", "enum", "items", "minItems", "maxItems", "properties",
    "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example", "anyOf",
    "propertyOrdering", "default", "minimum", "maximum",
];

/// Gemini's type names (matched without regard to case; clients send them upper-case).
const TYPES: &[&str] = &["string", "number", "integer", "boolean", "array", "object", "null"];

/// The `parameters` a client sends for an input schema (`None` for a tool without arguments), and the paths of the
/// open maps in it.
pub fn parameters(schema: &Value) -> (Option<Value>, Vec<String>) {
    if schema.get("properties").and_then(Value::as_object).is_some_and(Map::is_empty) {
        return (None, Vec::new());
    }
    let mut open_maps = Vec::new();
    let parameters = strip(schema, "", &mut open_maps);
    (Some(parameters), open_maps)
}

fn strip(node: &Value, path: &str, open_maps: &mut Vec<String>) -> Value {
    let Value::Object(map) = node else { return node.clone() };
    if map.get("type").and_then(Value::as_str) == Some("object")
        && map.get("additionalProperties").is_some_and(|a| a != &Value::Bool(false))
    {
        open_maps.push(path.to_owned());
    }
    let mut out = Map::new();
    for (key, value) in map {
        let value = match key.as_str() {
            "additionalProperties" => continue,
            "properties" => Value::Object(
                value.as_object().into_iter().flatten().map(|(k, v)| (k.clone(), strip(v, &format!("{path}.{k}"), open_maps))).collect(),
            ),
            "items" => strip(value, &format!("{path}[]"), open_maps),
            "anyOf" => Value::Array(
                value.as_array().into_iter().flatten().enumerate().map(|(i, v)| strip(v, &format!("{path}|{i}"), open_maps)).collect(),
            ),
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    Value::Object(out)
}

/// What in `parameters` Gemini's subset refuses, skipping the open maps at `open_maps`.
pub fn violations(parameters: &Value, open_maps: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    Subset { keywords: KEYWORDS, rule: &rule }.check(parameters, "", open_maps, &mut found);
    found
}

/// Gemini's rule for one schema: one type name (or an `anyOf`), `enum` only on strings, an object with properties.
fn rule(map: &Map<String, Value>, path: &str, found: &mut Vec<String>) {
    let kind = map.get("type").and_then(Value::as_str).map(str::to_lowercase);
    match (&kind, map.get("anyOf")) {
        (Some(t), None) if TYPES.contains(&t.as_str()) => {}
        (None, Some(Value::Array(_))) => {}
        _ => found.push(format!("{path}: needs one type name or an anyOf, has {:?}", map.get("type"))),
    }
    if map.contains_key("enum") && kind.as_deref() != Some("string") {
        found.push(format!("{path}: enum on a schema that is not a string"));
    }
    if kind.as_deref() == Some("object") {
        match map.get("properties").and_then(Value::as_object) {
            Some(properties) if !properties.is_empty() => {
                for name in map.get("required").and_then(Value::as_array).into_iter().flatten() {
                    if !name.as_str().is_some_and(|n| properties.contains_key(n)) {
                        found.push(format!("{path}: required {name} is not a property"));
                    }
                }
            }
            _ => found.push(format!("{path}: an object must list its properties")),
        }
    }
}
