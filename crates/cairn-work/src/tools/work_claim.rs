//! `work_claim`: claim a work item, naming yourself; refused, naming the holder, when someone else holds it.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;

super::account_params! {
    /// `work_claim` arguments.
    struct Params {
        /// Who claims, as they name themselves ("claude-code coordinator").
        claimant: String,
        /// The work item's id (work_list).
        item_id: String,
    }
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "work_claim",
        "Claim work. Claim a work item before working on it, naming yourself as claimant (\"claude-code \
         coordinator\"). Refused, naming who holds it, when someone else does: ask them to hand it off rather than \
         working it too.",
        true,
    )
    .with_title("Claim work")
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("work_claim", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let outcome = server.service.claim_item(caller, &p.account_id, &p.item_id, &p.claimant).await;
    reply(outcome.map(|item| json!({ "item": item })))
}
