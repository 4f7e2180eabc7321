//! `search_docs`: full-text search over the sections of every documentation page.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, docs_result, object_tool, parse};

super::docs_params! {
    /// `search_docs` arguments.
    struct Params {
        /// Keywords, a tool name or an error code.
        query: String,
        /// 1–50 (default 10).
        #[serde(default)]
        limit: Option<usize>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "search_docs",
        "Full-text search over the docs' sections: `[{ slug, title, headingId, headingText, snippet, score }]`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    match parse::<Params>("search_docs", args) {
        Ok(params) => docs_result(server.service.search_docs(&params.query, params.limit)),
        Err(error) => error,
    }
}
