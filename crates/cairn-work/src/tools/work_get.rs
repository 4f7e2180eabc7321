//! `work_get`: one work item whole (its notes in full), what it waits for, what waits for it, its children, and its
//! history, oldest first.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{WorkServer, parse, read_tool, reply};
use crate::auth::Caller;

super::account_params! {
    /// `work_get` arguments.
    struct Params {
        item_id: String,
    }
}

pub(crate) fn tool() -> Tool {
    read_tool::<Params>(
        "work_get",
        "A work item whole: `{ item, blockers, blocks, children, events }`, notes in full, history oldest first.",
    )
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("work_get", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    reply(server.service.item_history(caller, &p.account_id, &p.item_id).await)
}
