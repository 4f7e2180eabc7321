//! `work_update`: change a work item's state (in_progress, blocked, done), its notes, links, priority, labels,
//! blockers or parent; only its claimant or a person marks it done. An update by the holder renews its lease.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;
use crate::service::ItemUpdate;

super::account_params! {
    /// `work_update` arguments.
    struct Params {
        #[serde(default)]
        add_blocked_by: Vec<String>,
        #[serde(default)]
        add_labels: Vec<String>,
        item_id: String,
        /// Added (at most ten in all).
        #[serde(default)]
        links: Vec<String>,
        #[serde(default)]
        notes: String,
        /// "" takes it away.
        parent_id: Option<String>,
        priority: Option<i64>,
        #[serde(default)]
        remove_blocked_by: Vec<String>,
        #[serde(default)]
        remove_labels: Vec<String>,
        /// in_progress, blocked or done.
        #[serde(default)]
        state: String,
    }
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "work_update",
        "Changes an item's state, notes, links, priority, labels, blockers or parent. Only its claimant or a \
         person marks it done.",
        true,
    )
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("work_update", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let update = ItemUpdate {
        state: p.state,
        notes: p.notes,
        links: p.links,
        priority: p.priority,
        add_labels: p.add_labels,
        remove_labels: p.remove_labels,
        add_blocked_by: p.add_blocked_by,
        remove_blocked_by: p.remove_blocked_by,
        parent_id: p.parent_id,
    };
    let outcome = server.service.update_item(caller, &p.account_id, &p.item_id, &update).await;
    reply(outcome.map(|(item, changed)| json!({ "item": item, "changed": changed })))
}
