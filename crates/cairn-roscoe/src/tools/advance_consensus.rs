//! `advance_consensus`: the raw responses of every subagent of a pending consensus phase.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use super::{RoscoeServer, object_tool, parse};
use crate::engine::Answer;

super::answer_params! {
    /// `advance_consensus` arguments.
    struct Params {
        run_id: String,
        /// `agentCount` raw responses in agent order.
        responses: Vec<String>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "advance_consensus",
        "Answers a consensus step: every raw response of independent subagents (one per `agents[i]`), in order. \
         Returns the AdvanceResult. Errors: wrong_response_count, stale_step.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, mut call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("advance_consensus", call.args.take()) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let scope = params.scope();
    let answer = Answer::Consensus { responses: params.responses };
    server.advance(&call, scope, params.run_id, params.node_id, answer).await
}
