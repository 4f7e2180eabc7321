//! `get_run_status`: the run tree's status, its deepest pending step and its costs.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, object_tool, parse};

super::run_params! {
    /// `get_run_status` arguments.
    struct Params {
        run_id: String,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "get_run_status",
        "Returns a run's AdvanceResult (its deepest pendingStep). A human step: show its prompt and numbered \
         validTransitions to the user and wait; never call resume_run autonomously.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("get_run_status", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    server
        .run_tree(params.scope(), move |runs, scope| async move {
            runs.get_run_status(&scope, &params.run_id).await
        })
        .await
}
