//! `ask_docs`: the documentation sections most relevant to a question, whole, within a character budget.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, docs_result, object_tool, parse};

super::docs_params! {
    /// `ask_docs` arguments.
    struct Params {
        /// A question in natural language.
        question: String,
        /// Most characters of section text to return (default 12000).
        #[serde(default)]
        budget_chars: Option<usize>,
        /// Most sections to return (1–50, default 8).
        #[serde(default)]
        max_sections: Option<usize>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "ask_docs",
        "Knowledge-base retrieval: returns the heading sections most relevant to `question` (each the markdown from a \
         heading down to the next heading of the same or higher level, code and diagrams kept), packed within \
         `budget_chars`: `{ question, sections: [{ slug, title, headingId, headingText, text, score }], truncated, \
         totalChars }`. headingId is null for a page's introduction; /docs/<slug>#<headingId> links to a section. \
         Use it to answer from the docs yourself; answer_docs wraps it in a citation prompt.",
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
