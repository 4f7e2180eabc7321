//! `mark_review_as_passed`: record a passed review so it is skipped while its files stay the same.

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{DeepworkServer, text_tool};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    /// The review id from the instruction file's "After Review" section.
    review_id: String,
}

pub(crate) fn tool() -> Tool {
    text_tool::<Params>(
        "mark_review_as_passed",
        "Mark a review as passed: when it found nothing, when every finding was fixed, or when the user dismissed the \
         rest. The review is then skipped until the reviewed files change. The review_id is in the instruction file's \
         \"After Review\" section.",
    )
}

pub(crate) async fn call(server: &DeepworkServer, args: Option<JsonObject>, ctx: &RequestContext<RoleServer>) -> CallToolResult {
    let params = match cairn_mcp::args::parse::<Params>("mark_review_as_passed", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    server
        .run_text("mark_review_as_passed", ctx, move |service, root| {
            service.mark_review_as_passed(root, &params.review_id)
        })
        .await
}
