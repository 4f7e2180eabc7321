//! Error results that fit the tool's output schema, or carry no structured content.
//!
//! MCP clients check a result's `structuredContent` against the tool's `outputSchema`; Gemini CLI's replaces the
//! whole result (cairn's message included) with "Structured content does not match the tool's output schema" when
//! it does not fit. An error result's structured content often has another shape than the tool's answer, so an
//! error result whose structured content does not fit loses it and keeps its text, which says everything.

use std::sync::OnceLock;

use rmcp::model::{CallToolResult, Tool};

/// A tool's output schema, compiled on first use; `None` when the tool has none (or it does not compile).
#[derive(Debug, Default)]
pub(crate) struct OutputCheck(OnceLock<Option<jsonschema::Validator>>);

impl OutputCheck {
    /// `result`, without its structured content when it is an error whose content does not fit `tool`'s schema.
    pub(crate) fn fit(&self, tool: &Tool, mut result: CallToolResult) -> CallToolResult {
        if result.is_error != Some(true) {
            return result;
        }
        let Some(content) = result.structured_content.as_ref() else { return result };
        let validator = self.0.get_or_init(|| {
            let schema = serde_json::Value::Object(tool.output_schema.as_deref()?.clone());
            jsonschema::validator_for(&schema).ok()
        });
        if validator.as_ref().is_some_and(|v| !v.is_valid(content)) {
            result.structured_content = None;
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::model::{ContentBlock, JsonObject};
    use serde_json::json;

    use super::*;

    fn tool() -> Tool {
        let schema = json!({"type": "object", "properties": {"runs": {"type": "array"}}, "required": ["runs"]});
        let serde_json::Value::Object(schema) = schema else { unreachable!() };
        Tool::new("list_runs", "Lists runs", Arc::new(JsonObject::new())).with_raw_output_schema(Arc::new(schema))
    }

    fn error(structured: serde_json::Value) -> CallToolResult {
        let mut result = CallToolResult::error(vec![ContentBlock::text("bad cwd")]);
        result.structured_content = Some(structured);
        result
    }

    #[test]
    fn an_error_keeps_structured_content_only_when_it_fits() {
        let check = OutputCheck::default();
        assert_eq!(check.fit(&tool(), error(json!({"error": "bad cwd"}))).structured_content, None);
        let fitting = json!({"runs": []});
        assert_eq!(check.fit(&tool(), error(fitting.clone())).structured_content, Some(fitting));
        let mut success = CallToolResult::success(vec![ContentBlock::text("ok")]);
        success.structured_content = Some(json!({"other": 1}));
        assert!(check.fit(&tool(), success).structured_content.is_some(), "success results are the tool's business");
    }
}
