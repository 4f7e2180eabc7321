//! `work_update`: change a work item's state (in_progress, blocked, done), its notes, or add links; only its claimant
//! or a person marks it done.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;

super::account_params! {
    /// `work_update` arguments.
    struct Params {
        item_id: String,
        /// Links to add (at most ten in all).
        #[serde(default)]
        links: Vec<String>,
        #[serde(default)]
        notes: String,
        /// in_progress, blocked or done.
        #[serde(default)]
        state: String,
    }
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "work_update",
        "Changes an item's state (in_progress, blocked, done), notes or links. Only its claimant or a person marks it \
         done.",
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
