//! `get_run_status`: the run tree's status, its deepest pending step and its costs.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, object_tool, parse};

super::run_params! {
    /// `get_run_status` arguments.
    struct Params {
        /// Any run of the tree (the root or a subworkflow child).
        run_id: String,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "get_run_status",
        "Returns the run's status `{ runId, status, url, pendingStep?, output?, error?, …cost }` (runId is the root of \
         a subworkflow tree; pendingStep is the deepest pending step). Important: if status is `paused` and the \
         pendingStep is a human node, you must NOT call resume_run autonomously — show the prompt and the \
         validTransitions to the user as a numbered list and wait for their reply. Only ai_agent / ai_judge steps \
         may be answered programmatically (advance_run). A run of another project answers `Run not found.`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("get_run_status", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    server
        .run_runs(params.scope(), move |runs, scope| async move {
            runs.get_run_status(&scope, &params.run_id).await
        })
        .await
}
