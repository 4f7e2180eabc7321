//! Checking a schema against a host's subset of JSON Schema: every schema in it (properties, items, `anyOf`
//! variants), open maps apart, must be an object using only the subset's keywords and pass the subset's own rule.

use serde_json::{Map, Value};

/// A subset: its keywords, and its rule for one schema (reporting into the list it is given).
pub struct Subset<'a> {
    pub keywords: &'a [&'a str],
    pub rule: &'a dyn Fn(&Map<String, Value>, &str, &mut Vec<String>),
}

impl Subset<'_> {
    /// What in `node` (at `path`) the subset refuses, skipping the open maps at `open_maps`.
    pub fn check(&self, node: &Value, path: &str, open_maps: &[String], found: &mut Vec<String>) {
        if open_maps.iter().any(|m| m == path) {
            return;
        }
        let Value::Object(map) = node else {
            found.push(format!("{path}: a schema that is not an object"));
            return;
        };
        for key in map.keys() {
            if !self.keywords.contains(&key.as_str()) {
                found.push(format!("{path}: keyword `{key}`"));
            }
        }
        (self.rule)(map, path, found);
        for (name, property) in map.get("properties").and_then(Value::as_object).into_iter().flatten() {
            self.check(property, &format!("{path}.{name}"), open_maps, found);
        }
        if let Some(items) = map.get("items") {
            self.check(items, &format!("{path}[]"), open_maps, found);
        }
        for (i, variant) in map.get("anyOf").and_then(Value::as_array).into_iter().flatten().enumerate() {
            self.check(variant, &format!("{path}|{i}"), open_maps, found);
        }
    }
}
