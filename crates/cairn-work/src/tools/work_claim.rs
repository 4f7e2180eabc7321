//! `work_claim`: claim a work item, naming yourself, optionally with a lease; refused, naming the holder, when someone
//! else holds it.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;

super::account_params! {
    /// `work_claim` arguments.
    struct Params {
        /// Who claims ("claude-code coordinator").
        claimant: String,
        item_id: String,
        /// Renew with work_heartbeat or it opens again.
        lease_seconds: Option<i64>,
    }
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "work_claim",
        "Claims an item for `claimant` before working on it. Refused, naming the holder, when someone else holds \
         it: ask them to hand it off.",
        true,
    )
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("work_claim", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let outcome = server.service.claim_item(caller, &p.account_id, &p.item_id, &p.claimant, p.lease_seconds).await;
    reply(outcome.map(|item| json!({ "item": item })))
}
