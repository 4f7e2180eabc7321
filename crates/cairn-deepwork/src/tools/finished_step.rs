//! `finished_step`: hand in a step's outputs; get feedback, the next step, or completion.

use indexmap::IndexMap;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use schemars::JsonSchema;
use serde::Deserialize;

use serde_json::Value;

use super::{DeepworkServer, arguments, object_tool};
use crate::service::FinishStep;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    /// Outputs by argument name: file_path outputs take a path or list of paths relative to the project root,
    /// string outputs a string. Outputs marked required: false may be left out.
    #[serde(deserialize_with = "arguments::outputs")]
    #[schemars(schema_with = "arguments::values")]
    outputs: IndexMap<String, Value>,
    /// The session id given to start_workflow (or returned by it).
    #[serde(default)]
    #[schemars(schema_with = "arguments::nullable_string")]
    session_id: Option<String>,
    /// What you did in this step: key decisions, approach, deviations. Process reviews judge it.
    #[serde(default)]
    #[schemars(schema_with = "arguments::nullable_string")]
    work_summary: Option<String>,
    /// Skips the quality gate; say why it is not needed.
    #[serde(default)]
    #[schemars(schema_with = "arguments::nullable_string")]
    quality_review_override_reason: Option<String>,
    /// Sub-agent id, when the workflow runs on an agent's own stack.
    #[serde(default)]
    #[schemars(schema_with = "arguments::nullable_string")]
    agent_id: Option<String>,
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "finished_step",
        "Report the current step done. Outputs are checked, then the quality gate runs. The status says what next: \
         needs_work (follow the feedback, then call again), next_step (begin_step has the next step) or \
         workflow_complete (the workflow is popped from the stack; read post_workflow_instructions).",
    )
}

pub(crate) async fn call(server: &DeepworkServer, args: Option<JsonObject>, ctx: &RequestContext<RoleServer>) -> CallToolResult {
    let params = match cairn_mcp::args::parse::<Params>("finished_step", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let command = FinishStep {
        outputs: params.outputs,
        work_summary: params.work_summary,
        quality_review_override_reason: params.quality_review_override_reason,
        session_id: params.session_id,
        agent_id: params.agent_id,
    };
    server.run("finished_step", ctx, move |service, root| service.finished_step(root, command)).await
}
