//! `work_ready`: the ready queue of a space — open, unheld items whose blockers are all done — most urgent first,
//! then oldest; each item previewed as `work_list` previews it.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{WorkServer, parse, read_tool, reply};
use crate::auth::Caller;
use crate::preview;

/// `work_ready` arguments.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    #[serde(default)]
    labels: Vec<String>,
    #[serde(default)]
    page_size: i64,
    space_id: String,
}

pub(crate) fn tool() -> Tool {
    read_tool::<Params>(
        "work_ready",
        "Ready work: open, unheld items whose blockers are all done, most urgent first, then oldest.",
    )
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("work_ready", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let listed = server.service.ready_items(caller, &p.space_id, &p.labels, p.page_size).await.map(|items| {
        let mut items: Vec<_> = items.into_iter().map(|i| serde_json::to_value(i).expect("items serialize")).collect();
        items.iter_mut().for_each(preview::item);
        json!({ "items": items })
    });
    reply(listed)
}
