//! The model's part in a real-host test, written once for every host: from the tool results so far (oldest first,
//! each the text the tool returned), the next tool call — a tool of one of the host's MCP servers, named as cairn
//! names it — or the final text. Each host's stand-in (`responses.rs` for Codex, `gemini.rs` for Gemini CLI) turns a
//! [`Turn`] into its own API's shape and its requests' tool results back into text.

#![allow(dead_code, reason = "each test binary that includes this file uses part of it")]

use serde_json::Value;

/// What the model does next.
#[derive(Debug, Clone)]
pub enum Turn {
    /// Calls `tool` of the MCP server the host knows as `server` (`deepwork`, `roscoe`, `work`) with `args`.
    Call { server: &'static str, tool: &'static str, args: Value },
    /// Answers with text and ends its turn.
    Text(String),
}

/// The scripted model of one conversation.
pub type Script = dyn Fn(&[String]) -> Turn + Send + Sync;

/// The JSON of a tool result's text (a test failure names the text when it is not JSON).
pub fn parsed(text: &str) -> Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|_| panic!("a tool result that is not JSON: {text}"))
}
