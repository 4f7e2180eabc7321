//! `get_review_instructions`: review tasks for the changed files (or the files given), ready to hand to sub-agents.

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{DeepworkServer, arguments, text_tool};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    /// Files to review, relative to the project root. Omit to review what changed on this branch (against the
    /// default branch) plus staged and untracked files.
    #[serde(default)]
    #[schemars(schema_with = "arguments::nullable_strings")]
    files: Option<Vec<String>>,
}

pub(crate) fn tool() -> Tool {
    text_tool::<Params>(
        "get_review_instructions",
        "Find the review tasks for changed files from .deepreview rules and DeepSchemas. Returns a list of tasks to \
         launch in parallel, each with a description, an agent type and a prompt pointing at its instruction file, or a \
         message saying why there is nothing to review. Works outside workflows, at any time.",
    )
}

pub(crate) async fn call(server: &DeepworkServer, args: Option<JsonObject>, ctx: &RequestContext<RoleServer>) -> CallToolResult {
    let params = match cairn_mcp::args::parse::<Params>("get_review_instructions", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    server
        .run_text("get_review_instructions", ctx, move |service, root| {
            service.get_review_instructions(root, params.files)
        })
        .await
}
