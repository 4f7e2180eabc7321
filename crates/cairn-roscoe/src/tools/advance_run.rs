//! `advance_run`: the host's answer to a pending ai_agent or ai_judge step.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use super::{RoscoeServer, object_tool, parse};
use crate::engine::Answer;

super::run_params! {
    /// `advance_run` arguments.
    struct Params {
        run_id: String,
        /// Your answer: text (ai_agent) or the JSON asked for (ai_judge).
        response: String,
        /// Its nodeId: a stale answer is refused.
        #[serde(default, alias = "nodeId")]
        node_id: Option<String>,
        /// `true`: you could not do it (the node fails).
        #[serde(default)]
        failed: Option<bool>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "advance_run",
        "Answers a pending ai_agent (text) or ai_judge step (the JSON its prompt asks for); never a human step. \
         Returns the AdvanceResult. Errors: invalid_response, wrong_tool, stale_step, not_paused, terminal, \
         not_found.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, mut call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("advance_run", call.args.take()) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let scope = params.scope();
    let answer = Answer::Response { response: params.response, failed: params.failed.unwrap_or(false) };
    server.advance(&call, scope, params.run_id, params.node_id, answer).await
}
