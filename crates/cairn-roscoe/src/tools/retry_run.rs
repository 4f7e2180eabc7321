//! `retry_run` (tool 32): re-drives a failed or cancelled run from the node it stopped at.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use super::{RoscoeServer, object_tool, parse};

super::run_params! {
    /// `retry_run` arguments.
    struct Params {
        /// A failed or cancelled top-level run.
        run_id: String,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "retry_run",
        "Retries a failed or cancelled run: the same run id continues from the node that failed (or was cancelled), \
         keeping every completed node's output; the attempt is recorded in its history. Returns the AdvanceResult \
         (answer a pendingStep as usual). Errors: not_retryable (the run did not fail, or is a subworkflow child — \
         retry its root), not_found.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("retry_run", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let actor = super::actor(call.access);
    server
        .run_runs(params.scope(), move |runs, scope| async move {
            runs.retry_run(&scope, &params.run_id, &actor).await
        })
        .await
}
