//! `list_workflow_references`: the subworkflow nodes that point at a workflow.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, SourceArg, object_tool, parse};

super::scoped_params! {
    /// `list_workflow_references` arguments.
    struct Params {
        /// The referenced workflow id.
        id: String,
        /// Accepted for input-shape consistency; it scopes nothing (every workflow in scope is searched).
        #[serde(default)]
        source: Option<SourceArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "list_workflow_references",
        "Lists the workflows that reference the given workflow through a subworkflow node — the parents a delete \
         would orphan or a rename without cascade would leave dangling. Searches every workflow in scope whatever its \
         source (`source` scopes nothing). Returns `{ referrers: [{ workflowId, nodeId, source }] }`. Call before \
         delete_workflow or rename_workflow.",
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
