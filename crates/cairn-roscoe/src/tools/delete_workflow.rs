//! `delete_workflow`: delete a workflow file and its assets; needs `confirm: true`, refuses while referenced.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

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

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("delete_workflow", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let (source, confirm, force) = (
        source(params.source),
        params.confirm == Some(true),
        params.force == Some(true),
    );
    let scope = params.scope();
    server
        .write(call.access, "delete_workflow", &params.id.clone(), scope, move |service, scope, _| {
            service.delete_workflow(scope, &params.id, source, confirm, force)
        })
        .await
}
