//! `get_doc`: one documentation page's front matter and markdown.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, docs_result, object_tool, parse};

super::docs_params! {
    /// `get_doc` arguments.
    struct Params {
        /// A slug from list_docs.
        slug: String,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "get_doc",
        "Returns a docs page: `{ frontmatter, markdown }`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    match parse::<Params>("get_doc", args) {
        Ok(params) => docs_result(server.service.get_doc(&params.slug)),
        Err(error) => error,
    }
}
