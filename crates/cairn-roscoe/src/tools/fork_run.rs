//! `fork_run`: a new run of a run's workflow version from any node it reached, earlier outputs kept
//! ([`Runs::fork_run`](crate::runs::Runs::fork_run)).

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use super::{RoscoeServer, object_tool, parse};

super::run_params! {
    /// `fork_run` arguments.
    struct Params {
        /// A top-level run.
        run_id: String,
        /// A node the run started.
        #[serde(alias = "fromNodeId")]
        from_node_id: String,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "fork_run",
        "Starts a new run at from_node_id with the run's input, workflow version and every output made before that \
         node last started; the original stays. Returns the new run's AdvanceResult.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("fork_run", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let (asker, actor) = (super::FormAsker::of(call.context), super::actor(call.access));
    server
        .run_tree(params.scope(), move |runs, scope| async move {
            let result = runs.fork_run(&scope, &params.run_id, &params.from_node_id, &actor).await?;
            runs.ask_person(&scope, result, asker.as_ref(), &actor).await
        })
        .await
}
