//! Tool arguments: from the raw JSON object a client sent to a typed parameter struct.
//!
//! Parameter structs use `#[serde(deny_unknown_fields)]`, so a misspelt argument is reported instead of ignored.
//! A failure becomes an `isError` result that names the tool, the problem and how to fix it; the tool never runs.
//! Arguments that hosts add to every call on their own ([`HOST_ADDED`]) are dropped first, so they are accepted and
//! ignored while any other unknown argument is still refused.

use rmcp::model::{CallToolResult, JsonObject};
use serde::de::DeserializeOwned;

use crate::envelope;

/// Arguments hosts add to every tool call on their own: Gemini CLI's `wait_for_previous` (whether the call waits for
/// the one before it, a matter for the host alone).
pub const HOST_ADDED: &[&str] = &["wait_for_previous"];

/// `arguments` without those of [`HOST_ADDED`].
pub fn without_host_added(arguments: Option<JsonObject>) -> Option<JsonObject> {
    arguments.map(|mut object| {
        object.retain(|name, _| !HOST_ADDED.contains(&name.as_str()));
        object
    })
}

/// Parses `arguments` (absent means `{}`) into `T`, or returns the error result to send back.
pub fn parse<T: DeserializeOwned>(tool: &str, arguments: Option<JsonObject>) -> Result<T, CallToolResult> {
    let value = serde_json::Value::Object(arguments.unwrap_or_default());
    serde_json::from_value(value).map_err(|err| {
        envelope::error(format!(
            "Invalid arguments for tool '{tool}': {err}. Check the tool's input schema (tools/list) and call it again."
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Params {
        goal: String,
    }

    fn check(args: serde_json::Value) -> String {
        let object = args.as_object().cloned();
        match parse::<Params>("t", object) {
            Ok(_) => "ok".into(),
            Err(result) => result.content[0].as_text().map(|t| t.text.clone()).unwrap_or_default(),
        }
    }

    #[test]
    fn reports_missing_unknown_and_wrong_type() {
        assert_eq!(check(serde_json::json!({"goal": "x"})), "ok");
        assert!(check(serde_json::json!({})).contains("missing field `goal`"));
        assert!(check(serde_json::json!({"goal": "x", "foo": 1})).contains("unknown field `foo`"));
        assert!(check(serde_json::json!({"goal": 1})).contains("invalid type: integer `1`, expected a string"));
    }
}
