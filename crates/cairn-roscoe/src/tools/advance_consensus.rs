//! `advance_consensus`: the raw responses of every subagent of a pending consensus phase.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, object_tool, parse};
use crate::engine::Answer;

super::answer_params! {
    /// `advance_consensus` arguments.
    struct Params {
        /// The run (root or child) paused at a consensus step.
        run_id: String,
        /// Every subagent's raw response, in agent order (exactly `agentCount`).
        responses: Vec<String>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "advance_consensus",
        "Advances a consensus step: spawn `agentCount` independent subagents (none sees another's answer), subagent \
         i running agents[i].prompt on agents[i].model, and return every raw response here in agent order. \
         most_consistent nodes pause twice (consensusPhase generate: free prose; then aggregate: one subagent \
         returns {\"reasoning\", \"index\"}). gate/answer nodes validate each verdict; when invalid ones could still \
         change the outcome the node re-pauses with consensusPhase \"retry\" and only those agents (each with its \
         original `index`). A wrong number of responses is `wrong_response_count` and changes nothing. Returns the \
         AdvanceResult.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("advance_consensus", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let scope = params.scope();
    let answer = Answer::Consensus { responses: params.responses };
    server.advance(scope, params.run_id, params.node_id, answer).await
}
