//! `delete_workflow`: delete a workflow file and its assets; needs `confirm: true`, refuses while referenced.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, SourceArg, object_tool, parse, source};

super::scoped_params! {
    /// `delete_workflow` arguments.
    struct Params {
        /// The workflow id (its file stem).
        id: String,
        /// The source: `repo` or `global` (default: repo first when the project has a repo source).
        #[serde(default)]
        source: Option<SourceArg>,
        /// Must be literally `true` to delete.
        #[serde(default)]
        confirm: Option<bool>,
        /// `true` to delete even though other workflows reference it from a subworkflow node.
        #[serde(default)]
        force: Option<bool>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "delete_workflow",
        "Hard-deletes a workflow file and its asset folder. Requires literal `confirm: true`, and REFUSES when another \
         workflow references this one from a subworkflow node (`{ error, code: \"referenced\", referencedBy }`); pass \
         `force: true` to delete anyway. Returns `{ ok: true, path, source }`. Call list_workflow_references first.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("delete_workflow", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let (source, confirm, force) = (
        source(params.source),
        params.confirm == Some(true),
        params.force == Some(true),
    );
    server
        .run(params.scope(), move |service, scope| {
            service.delete_workflow(scope, &params.id, source, confirm, force)
        })
        .await
}
