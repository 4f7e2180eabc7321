//! `cancel_run`: stops a run and its whole subworkflow tree, killing running scripts.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use super::{RoscoeServer, object_tool, parse};

super::run_params! {
    /// `cancel_run` arguments.
    struct Params {
        run_id: String,
        /// Why (default "Cancelled by user").
        #[serde(default)]
        reason: Option<String>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "cancel_run",
        "Cancels a run and its subworkflow tree (scripts killed, nodes `cancelled`). Returns the AdvanceResult.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("cancel_run", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let actor = super::actor(call.access);
    server
        .run_tree(params.scope(), move |runs, scope| async move {
            runs.cancel_run(&scope, &params.run_id, params.reason, &actor).await
        })
        .await
}
