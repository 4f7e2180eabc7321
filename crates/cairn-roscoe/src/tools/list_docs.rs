//! `list_docs`: the manifest of cairn's embedded documentation pages.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{RoscoeServer, list_tool, parse, success};

super::docs_params! {
    /// `list_docs` arguments: none.
    struct Params {}
}

pub(crate) fn tool() -> Tool {
    list_tool::<Params>(
        "list_docs",
        "Lists cairn's documentation pages as `[{ slug, title, description }]`: concepts, guides, the tool and YAML \
         reference, troubleshooting. Read one with get_doc; find passages with search_docs or ask_docs. Takes no \
         scope: the docs are the same in every project.",
        json!({
            "type": "object",
            "properties": {
                "slug": { "type": "string" },
                "title": { "type": "string" },
                "description": { "type": "string" }
            }
        }),
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    if let Err(error) = parse::<Params>("list_docs", args) {
        return error;
    }
    success(serde_json::to_value(server.service.list_docs()).expect("doc summaries serialize"))
}
