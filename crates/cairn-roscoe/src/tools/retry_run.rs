//! `retry_run` (tool 32): re-drives a failed or cancelled run from the node it stopped at.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, object_tool, parse};

super::scoped_params! {
    /// `retry_run` arguments.
    struct Params {
        /// A failed or cancelled top-level run.
        #[serde(alias = "runId")]
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

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("retry_run", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    server
        .run_runs(params.scope(), move |runs, scope| async move {
            runs.retry_run(&scope, &params.run_id).await
        })
        .await
}
