//! `delete_workflow`: delete a workflow file and its assets; needs `confirm: true`, refuses while referenced.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use super::{RoscoeServer, SourceArg, object_tool, parse, source};

super::scoped_params! {
    /// `delete_workflow` arguments.
    struct Params {
        id: String,
        #[serde(default)]
        source: Option<SourceArg>,
        /// Must be `true`.
        #[serde(default)]
        confirm: Option<bool>,
        /// `true`: delete though referenced.
        #[serde(default)]
        force: Option<bool>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "delete_workflow",
        "Deletes a workflow and its assets (`confirm: true`); `referenced` while a subworkflow node names it, unless \
         `force`. Returns `{ ok, path, source }`.",
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
