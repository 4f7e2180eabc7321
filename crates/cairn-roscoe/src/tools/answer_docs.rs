//! `answer_docs`: a citation-required answer prompt over the sections `ask_docs` retrieves, for the host to run.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, docs_result, object_tool, parse};

super::docs_params! {
    /// `answer_docs` arguments.
    struct Params {
        /// A question in natural language.
        question: String,
        /// Most characters of source text in the prompt (default 12000).
        #[serde(default)]
        budget_chars: Option<usize>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "answer_docs",
        "Q&A over the docs without a server-side model call: retrieves sections like ask_docs and returns \
         `{ action: \"answer_prompt\", instructions, prompt, model, citations: [{ slug, title, headingId, headingText \
         }] }`. Run `prompt` yourself and present your answer with its [n] citations. An empty question, or one no \
         section matches, is an error (call ask_docs to inspect the retrieval). Prefer ask_docs when you only want \
         the sources.",
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
