//! `cancel_run`: stops a run and its whole subworkflow tree, killing running scripts.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use super::{RoscoeServer, object_tool, parse};

super::run_params! {
    /// `cancel_run` arguments.
    struct Params {
        /// Any run of the tree.
        run_id: String,
        /// Why (recorded as the run's error; default "Cancelled by user").
        #[serde(default)]
        reason: Option<String>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "cancel_run",
        "Cancels a running or paused run together with its whole subworkflow tree: running scripts are killed, and \
         the node each run was on is finalized as `cancelled` (not failed). A run that already ended is an error \
         (`terminal`), not a no-op. Returns the run detail (AdvanceResult).",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("cancel_run", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let actor = super::actor(call.access);
    server
        .run_runs(params.scope(), move |runs, scope| async move {
            runs.cancel_run(&scope, &params.run_id, params.reason, &actor).await
        })
        .await
}
