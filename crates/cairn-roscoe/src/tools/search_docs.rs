//! `search_docs`: full-text search over the sections of every documentation page.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{RoscoeServer, docs_result, list_tool, parse};

super::docs_params! {
    /// `search_docs` arguments.
    struct Params {
        /// Keywords, a tool name or an error code.
        query: String,
        /// How many hits at most (1–50, default 10).
        #[serde(default)]
        limit: Option<usize>,
    }
}

pub(crate) fn tool() -> Tool {
    list_tool::<Params>(
        "search_docs",
        "Full-text search (BM25) over every heading section of the docs. Returns ranked hits `[{ slug, title, \
         headingId, headingText, snippet, score }]`, the snippet showing up to ~80 characters either side of the \
         first match; a section whose heading is exactly the query (e.g. a tool name) comes first. Read a whole \
         page with get_doc, or get whole sections with ask_docs.",
        json!({
            "type": "object",
            "properties": {
                "slug": { "type": "string" },
                "title": { "type": "string" },
                "headingId": { "type": ["string", "null"] },
                "headingText": { "type": ["string", "null"] },
                "snippet": { "type": "string" },
                "score": { "type": "number" }
            }
        }),
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    match parse::<Params>("search_docs", args) {
        Ok(params) => docs_result(server.service.search_docs(&params.query, params.limit)),
        Err(error) => error,
    }
}
