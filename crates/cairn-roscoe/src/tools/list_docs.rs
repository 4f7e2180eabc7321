//! `list_docs`: the manifest of cairn's embedded documentation pages.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, object_tool, parse, success};

super::docs_params! {
    /// `list_docs` arguments: none.
    struct Params {}
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "list_docs",
        "Lists cairn's documentation pages: `[{ slug, title, description }]`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    if let Err(error) = parse::<Params>("list_docs", args) {
        return error;
    }
    success(serde_json::to_value(server.service.list_docs()).expect("doc summaries serialize"))
}
