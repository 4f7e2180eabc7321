//! `advance_map`: the raw responses of every subagent of a pending map phase (extract, map or reduce).

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, object_tool, parse};
use crate::engine::Answer;

super::answer_params! {
    /// `advance_map` arguments.
    struct Params {
        /// The run (root or child) paused at a map step.
        run_id: String,
        /// Every subagent's raw response, in agent order (exactly `agentCount`; an empty one is a failed branch).
        responses: Vec<String>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "advance_map",
        "Advances a map step: run exactly `agentCount` independent subagents, subagent i on agents[i].prompt with \
         agents[i].model, and return each raw response here in agent order, whatever the pendingStep.mapPhase: \
         extract (one subagent turns text into the list of items; the node re-pauses with one branch per item), map \
         (one subagent per branch; an empty response is a failed branch) or reduce (one subagent combines the \
         successful branches). A wrong number of responses is `wrong_response_count` and changes nothing. Returns \
         the AdvanceResult.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("advance_map", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let scope = params.scope();
    let answer = Answer::Map { responses: params.responses };
    server.advance(scope, params.run_id, params.node_id, answer).await
}
