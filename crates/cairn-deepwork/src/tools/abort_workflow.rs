//! `abort_workflow`: give up the active workflow and return to its parent.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use rmcp::service::RequestContext;
use rmcp::RoleServer;

use super::{DeepworkServer, arguments, object_tool};

arguments::stack_params! {
    /// Why the workflow cannot be completed.
    explanation: String,
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "abort_workflow",
        "Abort the active workflow when it cannot be completed, and resume the workflow below it on the stack (if \
         any). The explanation is recorded.",
    )
}

pub(crate) async fn call(server: &DeepworkServer, args: Option<JsonObject>, ctx: &RequestContext<RoleServer>) -> CallToolResult {
    let params = match cairn_mcp::args::parse::<Params>("abort_workflow", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    server
        .run("abort_workflow", ctx, move |service, root| {
            service.abort_workflow(root, params.explanation, params.session_id, params.agent_id)
        })
        .await
}
