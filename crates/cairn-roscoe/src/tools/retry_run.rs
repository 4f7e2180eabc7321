//! `retry_run` (tool 32): re-drives a failed or cancelled run from the node it stopped at.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use super::{RoscoeServer, object_tool, parse};

super::run_params! {
    /// `retry_run` arguments.
    struct Params {
        /// A failed or cancelled top-level run.
        run_id: String,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "retry_run",
        "Retries a failed or cancelled top-level run from the node that stopped it, keeping earlier outputs. Returns \
         the AdvanceResult. Errors: not_retryable.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("retry_run", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let (asker, actor) = (super::FormAsker::of(call.context), super::actor(call.access));
    server
        .run_tree(params.scope(), move |runs, scope| async move {
            let result = runs.retry_run(&scope, &params.run_id, &actor).await?;
            runs.ask_person(&scope, result, asker.as_ref(), &actor).await
        })
        .await
}
