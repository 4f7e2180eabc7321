//! `get_named_schemas`: list the named DeepSchemas (project, standard, extra folders) with their file patterns.

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{DeepworkServer, arguments, list_tool};

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = arguments::no_arguments)]
pub(crate) struct Params {}

pub(crate) fn tool() -> Tool {
    list_tool::<Params>(
        "get_named_schemas",
        "List the named DeepSchemas this project uses (its own, cairn's standard ones, and extra folders): name, \
         summary and the glob patterns of the files each one governs.",
        json!({"type": "object", "additionalProperties": true}),
    )
}

pub(crate) async fn call(server: &DeepworkServer, args: Option<JsonObject>, ctx: &RequestContext<RoleServer>) -> CallToolResult {
    if let Err(error) = cairn_mcp::args::parse::<Params>("get_named_schemas", args) {
        return error;
    }
    server.run_list("get_named_schemas", ctx, |service, root| service.get_named_schemas(root)).await
}
