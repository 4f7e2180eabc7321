//! `start_workflow`: start a workflow (nested on top of any active one) and get its first step.

use indexmap::IndexMap;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{DeepworkServer, OutputValue, object_tool};
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
    /// Session id: CLAUDE_CODE_SESSION_ID on Claude Code; elsewhere omit it and reuse begin_step.session_id.
    #[serde(default)]
    session_id: Option<String>,
    /// Values for the first step's inputs, by argument name: a string, or file path(s).
    #[serde(default)]
    inputs: Option<IndexMap<String, OutputValue>>,
    /// Sub-agent id (CLAUDE_CODE_AGENT_ID): the workflow goes on this agent's own stack.
    #[serde(default)]
    agent_id: Option<String>,
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "start_workflow",
        "Start a workflow and receive its first step: instructions, inputs and the outputs finished_step expects. \
         Starting while another workflow is active nests the new one on the stack. On Claude Code pass \
         CLAUDE_CODE_SESSION_ID as session_id (and CLAUDE_CODE_AGENT_ID as agent_id in a sub-agent); elsewhere omit \
         session_id and reuse the begin_step.session_id returned.",
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
        inputs: params.inputs.map(|i| i.into_iter().map(|(k, v)| (k, v.into())).collect()),
        agent_id: params.agent_id,
    };
    server.run("start_workflow", ctx, move |service, root| service.start_workflow(root, command)).await
}
