//! `resume_run`: a human's choice at a pending human step — never to be made by the AI itself.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use super::{RoscoeServer, object_tool, parse};

super::run_params! {
    /// `resume_run` arguments.
    struct Params {
        /// The run (root or child) paused at a human step.
        run_id: String,
        /// The transition the user chose: one of `validTransitions` (any case) or its 1-based number.
        transition: String,
        /// The user's comment, if they gave one.
        #[serde(default)]
        comment: Option<String>,
        /// The pending step's nodeId, to refuse a stale choice (`stale_step`).
        #[serde(default, alias = "nodeId")]
        node_id: Option<String>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "resume_run",
        "Resumes a run paused at a human node with the transition the user chose. Do not call autonomously: a human \
         node is a required human decision. First (1) show the node's prompt, (2) list the validTransitions as a \
         numbered list, (3) wait for the user's reply — never infer or assume the choice. An invalid transition \
         returns `{ error, code: \"invalid_transition\", validTransitions }` and changes nothing. Returns the \
         AdvanceResult.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("resume_run", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let scope = params.scope();
    let actor = super::actor(call.access);
    server
        .run_runs(scope, move |runs, scope| async move {
            runs.resume(&scope, &params.run_id, params.node_id, params.transition, params.comment, &actor).await
        })
        .await
}
