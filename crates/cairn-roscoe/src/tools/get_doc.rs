//! `get_doc`: one documentation page's front matter and markdown.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, docs_result, object_tool, parse};

super::docs_params! {
    /// `get_doc` arguments.
    struct Params {
        /// The page's slug as list_docs shows it, e.g. `guides/testing-workflows`.
        slug: String,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "get_doc",
        "Returns one documentation page as `{ frontmatter, markdown }`. An unknown slug is an error \
         (`{ error: \"Doc not found: <slug>…\", code: \"not_found\" }`); list_docs shows the slugs.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    match parse::<Params>("get_doc", args) {
        Ok(params) => docs_result(server.service.get_doc(&params.slug)),
        Err(error) => error,
    }
}
