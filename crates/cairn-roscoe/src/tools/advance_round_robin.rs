//! `advance_round_robin`: the resolve result or a wave of matchup verdicts of a pending round_robin step.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::{Map, Value};

use super::{RoscoeServer, object_tool, parse};
use crate::engine::Answer;

super::answer_params! {
    /// `advance_round_robin` arguments.
    struct Params {
        /// The run (root or child) paused at a round_robin step.
        run_id: String,
        /// first / contested phases: verdicts keyed by matchup id, each `{ winner: "A"|"B", margin: 0-100,
        /// reasoning? }` or the subagent's raw JSON text.
        #[serde(default)]
        verdicts: Option<Map<String, Value>>,
        /// resolve phase: the subagent's text (a JSON array of candidates).
        #[serde(default)]
        result: Option<String>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "advance_round_robin",
        "Advances a round_robin step by its pendingStep.roundRobinPhase. resolve: run one subagent on \
         agents[0].prompt and pass its text as `result`. first / contested: spawn one independent subagent per \
         matchup (matchups[i].prompt), each picking A or B (no ties) with a 0-100 decisiveness margin, and pass \
         `verdicts` keyed by matchup id. Submit waves as they complete; the node re-pauses with the matchups still \
         outstanding (and, in contested mode, a reversed re-judge batch). Invalid entries come back in `rejected`. \
         Returns the AdvanceResult.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("advance_round_robin", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let scope = params.scope();
    let answer = Answer::RoundRobin { verdicts: params.verdicts, result: params.result };
    server.advance(scope, params.run_id, params.node_id, answer).await
}
