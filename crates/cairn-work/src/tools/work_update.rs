//! `work_update`: change a work item's state (in_progress, blocked, done), its notes, or add links; only its claimant
//! or a person marks it done.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;

super::account_params! {
    /// `work_update` arguments.
    struct Params {
        /// The work item's id (work_list).
        item_id: String,
        /// Links to add; the item keeps at most ten.
        #[serde(default)]
        links: Vec<String>,
        /// New notes; empty leaves them.
        #[serde(default)]
        notes: String,
        /// "in_progress", "blocked" or "done"; empty leaves it.
        #[serde(default)]
        state: String,
    }
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "work_update",
        "Update work. Change a work item's state (in_progress, blocked or done), its notes, or add links (pull \
         requests, runs). Only its claimant or a person marks it done.",
        true,
    )
    .with_title("Update work")
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("work_update", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let outcome = server.service.update_item(caller, &p.account_id, &p.item_id, &p.state, &p.notes, &p.links).await;
    reply(outcome.map(|(item, changed)| json!({ "item": item, "changed": changed })))
}
