//! `advance_map`: the raw responses of every subagent of a pending map phase (extract, map or reduce).

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use super::{RoscoeServer, object_tool, parse};
use crate::engine::Answer;

super::answer_params! {
    /// `advance_map` arguments.
    struct Params {
        run_id: String,
        /// `agentCount` raw responses in agent order (empty: a failed branch).
        responses: Vec<String>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "advance_map",
        "Answers a map step (extract, map or reduce phase): exactly `agentCount` raw responses of independent \
         subagents, in agent order. Returns the AdvanceResult. Errors: wrong_response_count, stale_step.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, mut call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("advance_map", call.args.take()) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let scope = params.scope();
    let answer = Answer::Map { responses: params.responses };
    server.advance(&call, scope, params.run_id, params.node_id, answer).await
}
