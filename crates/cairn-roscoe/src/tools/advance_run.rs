//! `advance_run`: the host's answer to a pending ai_agent or ai_judge step.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, object_tool, parse};
use crate::engine::Answer;

super::run_params! {
    /// `advance_run` arguments.
    struct Params {
        /// The run (root or child) whose pending step you answer.
        run_id: String,
        /// Your response: any text for ai_agent; for ai_judge the JSON object the prompt asks for.
        response: String,
        /// The pending step's nodeId; when given, an answer to a step that is no longer pending is refused
        /// (`stale_step`) instead of being applied to the next one.
        #[serde(default, alias = "nodeId")]
        node_id: Option<String>,
        /// `true` when you could not do the task (the node fails and takes its `failure` route).
        #[serde(default)]
        failed: Option<bool>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "advance_run",
        "Answers a pending ai_agent or ai_judge step and drives the run to its next pause or its end. For ai_judge \
         the response must be the JSON envelope the prompt asks for (`{\"reasoning\": \"…\", \"verdict\": \"…\"}`); an \
         invalid one returns `{ error, code: \"invalid_response\", … }` with the same pendingStep to answer again. \
         Returns the AdvanceResult. Errors (the run is left as it was): wrong_tool (human and fan-out steps have \
         their own tools), stale_step, not_paused, terminal, not_found.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("advance_run", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let scope = params.scope();
    let answer = Answer::Response { response: params.response, failed: params.failed.unwrap_or(false) };
    server.advance(scope, params.run_id, params.node_id, answer).await
}
