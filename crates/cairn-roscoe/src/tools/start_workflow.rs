//! `start_workflow`: starts a run and drives it to its first pause (a pendingStep) or its end.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};
use serde_json::Value;

use super::{BudgetArg, ExecutionArg, FormAsker, RoscoeServer, SourceArg, object_tool, parse, source};
use crate::runs::{StartOptions, StartRequest};

super::scoped_params! {
    /// `start_workflow` arguments.
    struct Params {
        id: String,
        /// Its source (default: repo first).
        #[serde(default)]
        source: Option<SourceArg>,
        /// Run inputs (checked against its `inputs`).
        #[schemars(with = "Option<serde_json::Map<String, Value>>")]
        #[serde(default)]
        input: Option<Value>,
        /// `host` (you answer its AI steps; default) or `server`.
        #[serde(default)]
        execution: Option<ExecutionArg>,
        /// Server model calls' cap over the run tree.
        #[serde(default)]
        budget: Option<BudgetArg>,
        /// Ask human steps in my form (elicitation).
        #[serde(default)]
        ask_person: Option<bool>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "start_workflow",
        "Starts a run and drives it to its first pause or end: the AdvanceResult, with `narration` for the user. \
         Answer its `pendingStep` with the advance_* tool of its nodeType; a human step goes to the user, never \
         resumed autonomously.",
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
    let ask_person = params.ask_person.unwrap_or(false);
    let asker = FormAsker::of(call.context).filter(|_| ask_person);
    server
        .run_tree(params.scope(), move |runs, scope| async move {
            let options = StartOptions {
                client,
                execution: params.execution.map(Into::into),
                budget: params.budget.map(Into::into),
                wait: false,
                ask_person,
                ..StartOptions::default()
            };
            let input = params.input.as_ref();
            let start = StartRequest { scope: &scope, id: &params.id, source, input, actor: &actor };
            let mut started = runs.start_workflow_with(start, options).await?;
            started.result = runs.ask_person(&scope, started.result, asker.as_ref(), &actor).await?;
            Ok(started)
        })
        .await
}
