//! `get_run_history`: one run's full per-node trace, fan-out children nested.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{DetailArg, RoscoeServer, object_tool, parse, reshaped};
use crate::brief;

super::run_params! {
    /// `get_run_history` arguments.
    struct Params {
        /// The run (child runs: `childRunIds`).
        run_id: String,
        /// `full`: every field (default `brief`).
        #[serde(default)]
        detail: Option<DetailArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "get_run_history",
        "Returns one run's trace: `{ run, nodes, actions }`, nodes in order with input, output, error and fan-out \
         `children`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("get_run_history", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let detail = params.detail.unwrap_or_default();
    let answer = server
        .run_runs(params.scope(), move |runs, scope| async move {
            runs.get_run_history(&scope, &params.run_id).await
        })
        .await;
    match detail {
        DetailArg::Brief => reshaped(answer, brief::history),
        DetailArg::Full => answer,
    }
}
