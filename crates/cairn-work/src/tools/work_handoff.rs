//! `work_handoff`: hand a work item off with a note and whom it is for; it becomes open with nobody holding it.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;

super::account_params! {
    /// `work_handoff` arguments.
    struct Params {
        item_id: String,
        /// What was done and what is left (up to 4000 characters).
        note: String,
        /// Whom it is for (default anyone).
        #[serde(default)]
        to: String,
    }
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "work_handoff",
        "Hands an item off with a `note` to `to` (or anyone); it opens again, unheld. Do it before a session ends \
         with work unfinished.",
        false,
    )
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("work_handoff", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let outcome = server.service.handoff_item(caller, &p.account_id, &p.item_id, &p.note, &p.to).await;
    reply(outcome.map(|item| json!({ "item": item })))
}
