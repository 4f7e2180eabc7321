//! `list_workflow_references`: the subworkflow nodes that point at a workflow.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, SourceArg, object_tool, parse};

super::scoped_params! {
    /// `list_workflow_references` arguments.
    struct Params {
        /// The referenced workflow id.
        id: String,
        /// Ignored (every source is searched).
        #[serde(default)]
        source: Option<SourceArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "list_workflow_references",
        "Lists the subworkflow nodes naming a workflow: `{ referrers: [{ workflowId, nodeId, source }] }`. Call \
         before delete or rename.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("list_workflow_references", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    // `source` scopes nothing here (seed): the search covers every workflow in scope.
    let _ = params.source;
    server
        .run(params.scope(), move |service, scope| {
            service.list_workflow_references(scope, &params.id)
        })
        .await
}
