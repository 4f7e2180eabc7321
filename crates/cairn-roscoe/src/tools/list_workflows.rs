//! `list_workflows`: every workflow in scope (repo and global), a shadowed global marked `shadowed: true`.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, SourceArg, object_tool, parse, source};

super::scoped_params! {
    /// `list_workflows` arguments.
    struct Params {
        /// Only this source (default: both).
        #[serde(default)]
        source: Option<SourceArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "list_workflows",
        "Lists the workflows of both sources, `[{ id, name, description, source, shadowed }]` (a repo workflow \
         shadows a global one with its id; an unreadable file has `error`).",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("list_workflows", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let source = source(params.source);
    let runs = server.runs.clone();
    server
        .run(params.scope(), move |_, scope| runs.list_workflows(scope, source))
        .await
}
