//! `answer_docs`: a citation-required answer prompt over the sections `ask_docs` retrieves, for the host to run.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, docs_result, object_tool, parse};

super::docs_params! {
    /// `answer_docs` arguments.
    struct Params {
        /// A question in natural language.
        question: String,
        /// Most source characters (default 12000).
        #[serde(default)]
        budget_chars: Option<usize>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "answer_docs",
        "Returns a prompt that answers `question` from the docs with [n] citations: `{ action, instructions, prompt, \
         model, citations }`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    match parse::<Params>("answer_docs", args) {
        Ok(params) => docs_result(
            server
                .service
                .answer_docs(&params.question, params.budget_chars),
        ),
        Err(error) => error,
    }
}
