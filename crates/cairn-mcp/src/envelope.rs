//! Tool result envelopes: the shapes a tool result takes on the wire.
//!
//! An *object* result carries the compact JSON text of the value plus the same value as `structuredContent`; a *list*
//! result wraps the array as `{"result": [...]}` (the text item is omitted for an empty list); a *text* result wraps a
//! string the same way; an *error* result is `isError: true` with one text item.

use rmcp::model::{CallToolResult, ContentBlock, MetaObject};
use serde_json::{Value, json};

/// A successful result whose structured content is `value` (a JSON object) and whose text is its compact JSON.
pub fn object(value: Value) -> CallToolResult {
    let text = compact(&value);
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(value);
    result
}

/// A successful result for a tool that returns a list: `structuredContent` is `{"result": items}`.
pub fn list(items: Vec<Value>) -> CallToolResult {
    let content = if items.is_empty() { Vec::new() } else { vec![ContentBlock::text(compact(&json!(items)))] };
    wrapped(content, Value::Array(items))
}

/// A successful result for a tool that returns one string: `structuredContent` is `{"result": text}`.
pub fn text(text: String) -> CallToolResult {
    wrapped(vec![ContentBlock::text(text.clone())], Value::String(text))
}

/// A failed call (`isError: true`) with `message` as its only content.
pub fn error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

/// The output schema of a tool whose result is `{"result": <item_schema>}`.
pub fn wrapped_schema(item_schema: Value) -> serde_json::Map<String, Value> {
    let schema = json!({
        "type": "object",
        "properties": {"result": item_schema},
        "required": ["result"],
        "x-fastmcp-wrap-result": true,
    });
    match schema {
        Value::Object(map) => map,
        _ => unreachable!("a json! object literal is an object"),
    }
}

/// The output schema of a tool that returns a free-form object.
pub fn object_schema() -> serde_json::Map<String, Value> {
    match json!({"type": "object", "additionalProperties": true}) {
        Value::Object(map) => map,
        _ => unreachable!("a json! object literal is an object"),
    }
}

fn wrapped(content: Vec<ContentBlock>, value: Value) -> CallToolResult {
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(json!({ "result": value }));
    let mut meta = serde_json::Map::new();
    meta.insert("fastmcp".into(), json!({"wrap_result": true}));
    result.meta = Some(MetaObject(meta));
    result
}

/// Compact JSON (no spaces), non-ASCII kept as is.
fn compact(value: &Value) -> String {
    serde_json::to_string(value).expect("a serde_json::Value always serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_list_has_no_text_item() {
        let result = list(Vec::new());
        assert!(result.content.is_empty());
        assert_eq!(result.structured_content, Some(json!({"result": []})));
    }

    #[test]
    fn object_text_is_compact_json_in_field_order() {
        let result = object(json!({"b": 1, "a": "—"}));
        let text = result.content[0].as_text().map(|t| t.text.clone());
        assert_eq!(text.as_deref(), Some("{\"b\":1,\"a\":\"—\"}"));
    }
}
