//! `go_to_step`: go back to an earlier step (or restart the current one), clearing progress from there on.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use rmcp::service::RequestContext;
use rmcp::RoleServer;

use super::{DeepworkServer, arguments, object_tool};

arguments::stack_params! {
    /// The step to go back to; it must not be after the current step.
    step_id: String,
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "go_to_step",
        "Go back to an earlier step of the active workflow (or restart the current one) when earlier work must be \
         redone. Progress of that step and every later one is cleared and they must be done again; files on disk \
         are left alone.",
    )
}

pub(crate) async fn call(server: &DeepworkServer, args: Option<JsonObject>, ctx: &RequestContext<RoleServer>) -> CallToolResult {
    let params = match cairn_mcp::args::parse::<Params>("go_to_step", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    server
        .run("go_to_step", ctx, move |service, root| {
            service.go_to_step(root, params.step_id, params.session_id, params.agent_id)
        })
        .await
}
