//! `ask_docs`: the documentation sections most relevant to a question, whole, within a character budget.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, docs_result, object_tool, parse};

super::docs_params! {
    /// `ask_docs` arguments.
    struct Params {
        /// A question in natural language.
        question: String,
        /// Most characters (default 12000).
        #[serde(default)]
        budget_chars: Option<usize>,
        /// 1–50 (default 8).
        #[serde(default)]
        max_sections: Option<usize>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "ask_docs",
        "Returns the docs sections most relevant to `question`: `{ question, sections, truncated, totalChars }`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    match parse::<Params>("ask_docs", args) {
        Ok(params) => docs_result(server.service.ask_docs(
            &params.question,
            params.budget_chars,
            params.max_sections,
        )),
        Err(error) => error,
    }
}
