//! `start_workflow`: start a workflow (nested on top of any active one) and get its first step.

use indexmap::IndexMap;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use schemars::JsonSchema;
use serde::Deserialize;

use serde_json::Value;

use super::{DeepworkServer, arguments, object_tool};
use crate::service::StartWorkflow;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    /// What the user wants to accomplish.
    goal: String,
    /// Name of the job.
    job_name: String,
    /// Name of the workflow in the job (a job with a single workflow accepts any name).
    workflow_name: String,
    /// CLAUDE_CODE_SESSION_ID when your context has it; otherwise leave it out and pass the begin_step.session_id
    /// returned to every later call.
    #[serde(default)]
    #[schemars(schema_with = "arguments::nullable_string")]
    session_id: Option<String>,
    /// Values for the first step's inputs, by argument name: a string, or file path(s).
    #[serde(default, deserialize_with = "arguments::inputs")]
    #[schemars(schema_with = "arguments::nullable_values")]
    inputs: Option<IndexMap<String, Value>>,
    /// Sub-agent id (CLAUDE_CODE_AGENT_ID): the workflow goes on this agent's own stack.
    #[serde(default)]
    #[schemars(schema_with = "arguments::nullable_string")]
    agent_id: Option<String>,
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "start_workflow",
        "Start a workflow and receive its first step: instructions, inputs and the outputs finished_step expects. \
         Starting while another workflow is active nests the new one on the stack. Pass CLAUDE_CODE_SESSION_ID as \
         session_id when your context has it (and CLAUDE_CODE_AGENT_ID as agent_id in a sub-agent); otherwise omit \
         session_id and pass the begin_step.session_id returned to every later call.",
    )
}

pub(crate) async fn call(server: &DeepworkServer, args: Option<JsonObject>, ctx: &RequestContext<RoleServer>) -> CallToolResult {
    let params = match cairn_mcp::args::parse::<Params>("start_workflow", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let command = StartWorkflow {
        goal: params.goal,
        job_name: params.job_name,
        workflow_name: params.workflow_name,
        session_id: params.session_id,
        inputs: params.inputs,
        agent_id: params.agent_id,
    };
    server.run("start_workflow", ctx, move |service, root| service.start_workflow(root, command)).await
}
