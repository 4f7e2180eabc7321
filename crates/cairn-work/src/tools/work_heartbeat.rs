//! `work_heartbeat`: the holder renews its lease on a work item, which otherwise opens again when the lease runs out.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;

super::account_params! {
    /// `work_heartbeat` arguments.
    struct Params {
        claimant: String,
        item_id: String,
    }
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "work_heartbeat",
        "Renews your lease on an item for as long again.",
        true,
    )
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("work_heartbeat", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let outcome = server.service.heartbeat(caller, &p.account_id, &p.item_id, &p.claimant).await;
    reply(outcome.map(|item| json!({ "item": item })))
}
