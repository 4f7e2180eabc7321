//! `get_configured_reviews`: list the review rules (.deepreview and DeepSchema), optionally only those matching files.

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{DeepworkServer, arguments, list_tool};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    /// Only list rules that match at least one of these files (relative to the project root).
    #[serde(default)]
    #[schemars(schema_with = "arguments::nullable_strings")]
    only_rules_matching_files: Option<Vec<String>>,
}

pub(crate) fn tool() -> Tool {
    list_tool::<Params>(
        "get_configured_reviews",
        "List the configured review rules from .deepreview files and DeepSchemas: name, description and where each is \
         defined (file:line). Pass only_rules_matching_files to see which rules apply to some files.",
        json!({"type": "object", "additionalProperties": {"type": "string"}}),
    )
}

pub(crate) async fn call(server: &DeepworkServer, args: Option<JsonObject>, ctx: &RequestContext<RoleServer>) -> CallToolResult {
    let params = match cairn_mcp::args::parse::<Params>("get_configured_reviews", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    server
        .run_list("get_configured_reviews", ctx, move |service, root| {
            service.get_configured_reviews(root, params.only_rules_matching_files)
        })
        .await
}
