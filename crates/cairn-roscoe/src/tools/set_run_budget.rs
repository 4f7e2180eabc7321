//! `set_run_budget`: sets the budget of a run tree whose AI steps the server runs, and lets a run paused on it
//! continue.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use super::{BudgetArg, RoscoeServer, object_tool, parse};

super::scoped_params! {
    /// `set_run_budget` arguments.
    struct Params {
        /// A run of the tree.
        #[serde(alias = "runId")]
        run_id: String,
        /// `{ usd?, tokens? }`; a limit left out is removed.
        budget: BudgetArg,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "set_run_budget",
        "Sets a server-run tree's budget `{ usd?, tokens? }`; a run held by `budgetExceeded` goes on if it fits. \
         Returns the AdvanceResult.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("set_run_budget", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let actor = super::actor(call.access);
    server
        .run_tree(params.scope(), move |runs, scope| async move {
            runs.set_budget(&scope, &params.run_id, params.budget.into(), &actor).await
        })
        .await
}
