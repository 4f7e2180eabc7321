//! `abort_workflow`: give up the active workflow and return to its parent.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{DeepworkServer, arguments, object_tool};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    /// Why the workflow cannot be completed.
    explanation: String,
    /// The session id given to start_workflow (or returned by it).
    #[serde(default)]
    #[schemars(schema_with = "arguments::nullable_string")]
    session_id: Option<String>,
    /// Sub-agent id, when the workflow runs on an agent's own stack.
    #[serde(default)]
    #[schemars(schema_with = "arguments::nullable_string")]
    agent_id: Option<String>,
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
