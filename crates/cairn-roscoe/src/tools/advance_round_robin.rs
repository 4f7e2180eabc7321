//! `advance_round_robin`: the resolve result or a wave of matchup verdicts of a pending round_robin step.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};
use serde_json::{Map, Value};

use super::{RoscoeServer, object_tool, parse};
use crate::engine::Answer;

super::answer_params! {
    /// `advance_round_robin` arguments.
    struct Params {
        run_id: String,
        /// first / contested: by matchup id, `{ winner: "A"|"B", margin: 0-100, reasoning? }` or its JSON text.
        #[serde(default)]
        verdicts: Option<Map<String, Value>>,
        /// resolve: the subagent's text.
        #[serde(default)]
        result: Option<String>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "advance_round_robin",
        "Answers a round_robin step: `result` (resolve) or `verdicts` by matchup id (first, contested), in waves if \
         you like. Returns the AdvanceResult.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, mut call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("advance_round_robin", call.args.take()) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let scope = params.scope();
    let answer = Answer::RoundRobin { verdicts: params.verdicts, result: params.result };
    server.advance(&call, scope, params.run_id, params.node_id, answer).await
}
