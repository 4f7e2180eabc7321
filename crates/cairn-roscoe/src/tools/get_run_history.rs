//! `get_run_history`: one run's full per-node trace, fan-out children nested.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, object_tool, parse};

super::run_params! {
    /// `get_run_history` arguments.
    struct Params {
        /// The run (exactly this one; child runs are listed in `childRunIds`).
        run_id: String,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "get_run_history",
        "Returns the full trace of one run: `{ run: { id, workflowId, workflowName, status, startedAt, completedAt, \
         source, workflowSource, context, parentRunId, childRunIds, awaitingChild }, nodes: [{ id, nodeId, nodeType, \
         status, startedAt, completedAt, durationMs, attempts, input, output, error, children }] }` — nodes in \
         execution order, fan-out agents, matchups and branches as `children`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("get_run_history", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    server
        .run_runs(params.scope(), move |runs, scope| async move {
            runs.get_run_history(&scope, &params.run_id).await
        })
        .await
}
