//! `get_workflow`: the full workflow config plus its `source` and `path`, repo first unless `source` is given.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, SourceArg, object_tool, parse, source};

super::scoped_params! {
    /// `get_workflow` arguments.
    struct Params {
        id: String,
        #[serde(default)]
        source: Option<SourceArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "get_workflow",
        "Returns a workflow as JSON, with `source` and `path`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("get_workflow", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let source = source(params.source);
    let runs = server.runs.clone();
    server
        .run(params.scope(), move |_, scope| runs.get_workflow(scope, &params.id, source))
        .await
}
