//! `start_workflow`: starts a run and drives it to its first pause (a pendingStep) or its end.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};
use serde_json::Value;

use super::{BudgetArg, ExecutionArg, RoscoeServer, SourceArg, object_tool, parse, source};
use crate::runs::{StartOptions, StartRequest};

super::scoped_params! {
    /// `start_workflow` arguments.
    struct Params {
        /// The workflow id.
        id: String,
        /// Its source (default: repo first).
        #[serde(default)]
        source: Option<SourceArg>,
        /// Run inputs, checked against the workflow's `inputs` (defaults applied).
        #[schemars(with = "Option<serde_json::Map<String, Value>>")]
        #[serde(default)]
        input: Option<Value>,
        /// Who runs its AI steps: `host` (handed back to you, the default) or `server` (the server calls its model
        /// providers; the run goes on by itself — follow it with get_run_status).
        #[serde(default)]
        execution: Option<ExecutionArg>,
        /// The most the run (with its subworkflows) may spend on the server's model calls: `{ usd?, tokens? }`.
        #[serde(default)]
        budget: Option<BudgetArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "start_workflow",
        "Starts a workflow run. Script and condition nodes run right away; the call returns at the first AI, human or \
         fan-out step with `pendingStep` (or when the run ends). Returns `{ runId, status, url, workflow, narration, \
         pendingStep?, output?, error?, …cost }`: send `narration` to the user, then answer the pending step with the \
         tool its type needs (ai_agent / ai_judge: advance_run; consensus: advance_consensus; round_robin: \
         advance_round_robin; map: advance_map; human: show it to the user and call resume_run only with their \
         choice). `hostHint` says how to answer fan-out steps without subagents. With `execution: \"server\"` the server \
         answers the AI steps itself through its model providers (within `budget`) and the call returns while it \
         does. Errors: not_found, invalid_config, integrity_error, invalid_input.",
    )
}

/// Runs the tool; `client` is the MCP client's name (for the host hint).
pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    let client = call.context.peer.peer_info().map(|info| info.client_info.name.clone());
    let params = match parse::<Params>("start_workflow", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let source = source(params.source);
    let actor = super::actor(call.access);
    server
        .run_runs(params.scope(), move |runs, scope| async move {
            let options = StartOptions {
                client,
                execution: params.execution.map(Into::into),
                budget: params.budget.map(Into::into),
                wait: false,
            };
            let input = params.input.as_ref();
            let start = StartRequest { scope: &scope, id: &params.id, source, input, actor: &actor };
            runs.start_workflow_with(start, options).await
        })
        .await
}
