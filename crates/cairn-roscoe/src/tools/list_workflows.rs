//! `list_workflows`: every workflow in scope (repo and global), a shadowed global marked `shadowed: true`.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{RoscoeServer, SourceArg, list_tool, parse, source};

super::scoped_params! {
    /// `list_workflows` arguments.
    struct Params {
        /// Only this source: `repo` or `global` (default: both).
        #[serde(default)]
        source: Option<SourceArg>,
    }
}

pub(crate) fn tool() -> Tool {
    list_tool::<Params>(
        "list_workflows",
        "Lists all workflows from both the global and the project (repo) source: `[{ id, name, description, source, \
         shadowed }]`. When the same id exists in both, repo wins and the global entry has `shadowed: true`. Pass \
         `source` to list one source only. A file that cannot be read is listed with an `error`.",
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "name": {"type": "string"},
                "description": {"type": ["string", "null"]},
                "source": {"enum": ["repo", "global"]},
                "shadowed": {"type": "boolean"},
                "error": {"type": "string"}
            },
            "required": ["id", "name", "description", "source", "shadowed"]
        }),
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("list_workflows", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let source = source(params.source);
    server
        .run(params.scope(), move |service, scope| {
            service.list_workflows(scope, source)
        })
        .await
}
