//! `resume_run`: a human's choice at a pending human step — never to be made by the AI itself.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use super::{RoscoeServer, object_tool, parse};

super::run_params! {
    /// `resume_run` arguments.
    struct Params {
        run_id: String,
        /// The user's choice: a validTransition or its number.
        transition: String,
        /// The user's comment, if they gave one.
        #[serde(default)]
        comment: Option<String>,
        /// Its nodeId: a stale choice is refused.
        #[serde(default, alias = "nodeId")]
        node_id: Option<String>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "resume_run",
        "Resumes a human step with the user's own choice, never autonomously: show the prompt and numbered \
         validTransitions first. Returns the AdvanceResult. Errors: invalid_transition, stale_step.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("resume_run", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let scope = params.scope();
    let (asker, actor) = (super::FormAsker::of(call.context), super::actor(call.access));
    server
        .run_tree(scope, move |runs, scope| async move {
            let result =
                runs.resume(&scope, &params.run_id, params.node_id, params.transition, params.comment, &actor).await?;
            runs.ask_person(&scope, result, asker.as_ref(), &actor).await
        })
        .await
}
