//! `get_workflows`: list every job and workflow the project can run, and the jobs that fail to load.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{DeepworkServer, arguments, object_tool};

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = arguments::no_arguments)]
pub(crate) struct Params {}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "get_workflows",
        "List the DeepWork jobs of this project with their workflows and how to start each one. Jobs that fail to \
         load are listed under `errors` with what to fix. Call this first.",
    )
}

pub(crate) async fn call(server: &DeepworkServer, args: Option<JsonObject>, ctx: &RequestContext<RoleServer>) -> CallToolResult {
    if let Err(error) = cairn_mcp::args::parse::<Params>("get_workflows", args) {
        return error;
    }
    server
        .run_here("get_workflows", ctx, |service, root| {
            let (list, issue) = service.get_workflows(root);
            (Ok(list), issue)
        })
        .await
}
