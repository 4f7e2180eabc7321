//! OpenAI function calling in strict mode: the strict form of an MCP input schema, derived the way OpenAI's SDKs
//! derive it from a tool's schema (the Agents SDK's MCP tools with strict schemas on), and the rules strict mode holds
//! that form to.
//!
//! The derivation: every object without `additionalProperties` gets `additionalProperties: false`, every object's
//! properties all become `required`, and `default: null` is dropped. This is faithful only when every optional
//! argument accepts `null` (the portable rules check that), since a strict host then sends `null` for each argument it
//! leaves out. An object that allows additional properties (an open map, such as `finished_step.outputs`) cannot be
//! made strict: the SDKs then send that tool in non-strict mode. The derivation reports those maps by path.

use serde_json::{Map, Value, json};

use crate::subset::Subset;

/// The keywords strict mode accepts in a schema.
const KEYWORDS: &[&str] = &[
    "type", "description", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "pattern",
    "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
];

/// The string formats strict mode knows.
const FORMATS: &[&str] = &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// The strict form of `schema`, and the paths of the open maps in it (left as they are).
pub fn strict_form(schema: &Value) -> (Value, Vec<String>) {
    let mut strict = schema.clone();
    let mut open_maps = Vec::new();
    derive(&mut strict, "", &mut open_maps);
    (strict, open_maps)
}

fn derive(node: &mut Value, path: &str, open_maps: &mut Vec<String>) {
    let Value::Object(map) = node else { return };
    if map.get("type") == Some(&json!("object")) {
        match map.get("additionalProperties") {
            None => {
                map.insert("additionalProperties".into(), json!(false));
            }
            Some(Value::Bool(false)) => {}
            Some(_) => {
                open_maps.push(path.to_owned());
                return;
            }
        }
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        let names: Vec<Value> = properties.keys().map(|k| json!(k)).collect();
        for (name, property) in properties.iter_mut() {
            derive(property, &format!("{path}.{name}"), open_maps);
        }
        map.insert("required".into(), Value::Array(names));
    }
    if let Some(items) = map.get_mut("items") {
        derive(items, &format!("{path}[]"), open_maps);
    }
    if let Some(Value::Array(variants)) = map.get_mut("anyOf") {
        for (i, variant) in variants.iter_mut().enumerate() {
            derive(variant, &format!("{path}|{i}"), open_maps);
        }
    }
    if map.get("default") == Some(&Value::Null) {
        map.remove("default");
    }
}

/// What in `strict` (a derived strict form) strict mode refuses, skipping the open maps at `open_maps`.
pub fn violations(strict: &Value, open_maps: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    if strict.get("type") != Some(&json!("object")) {
        found.push("the root is not an object".to_owned());
    }
    Subset { keywords: KEYWORDS, rule: &rule }.check(strict, "", open_maps, &mut found);
    found
}

/// Strict mode's rule for one schema: one type (or an `anyOf`), a known string format, and an object with
/// properties, all of them required, and no other properties allowed.
fn rule(map: &Map<String, Value>, path: &str, found: &mut Vec<String>) {
    match (map.get("type"), map.get("anyOf")) {
        (Some(Value::String(t)), None) if ["string", "number", "integer", "boolean", "array", "object", "null"].contains(&t.as_str()) => {}
        (None, Some(Value::Array(_))) => {}
        (t, _) => found.push(format!("{path}: needs one type or an anyOf, has type {t:?}")),
    }
    if let Some(Value::String(format)) = map.get("format")
        && !FORMATS.contains(&format.as_str())
    {
        found.push(format!("{path}: format `{format}`"));
    }
    if map.get("type") == Some(&json!("object")) {
        let Some(Value::Object(properties)) = map.get("properties") else {
            found.push(format!("{path}: an object without properties"));
            return;
        };
        if map.get("additionalProperties") != Some(&json!(false)) {
            found.push(format!("{path}: additionalProperties is not false"));
        }
        let required: Vec<&str> = map.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        if required.len() != properties.len() || !properties.keys().all(|k| required.contains(&k.as_str())) {
            found.push(format!("{path}: required {required:?} is not every property"));
        }
    }
}
