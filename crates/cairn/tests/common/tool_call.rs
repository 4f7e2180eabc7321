//! Calling a tool as the e2e tests of every surface do: over the client's [`Peer`] (a protocol error fails the test),
//! reading a result's text, and the structured content of a call that must succeed, checked against its text.

#![allow(dead_code, reason = "each test binary that includes this file uses part of it")]

use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::Peer;
use serde_json::Value;

/// Calls `tool` with `args` (an object); a protocol error fails the test.
pub async fn call_tool(peer: &Peer<RoleClient>, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else { panic!("arguments must be an object") };
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
    peer.call_tool(params).await.unwrap_or_else(|e| panic!("{tool}: protocol error {e}"))
}

/// The text blocks of `result`, joined.
pub fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("")
}

/// The structured content of `result`, a call of `tool` that must have succeeded, checked against its text block.
pub fn succeeded(tool: &str, result: &CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "{tool} failed: {}", text(result));
    let structured = result.structured_content.clone().expect("structured content");
    let from_text: Value = serde_json::from_str(&text(result)).expect("the text block is JSON");
    assert_eq!(structured, from_text, "text and structuredContent differ");
    structured
}
