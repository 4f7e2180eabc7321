//! `work_claim_next`: claim the first item `work_ready` would list, in one call; two agents calling at once get two
//! different items. `{ "item": null, "reason" }` when nothing is ready.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;

/// `work_claim_next` arguments.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    claimant: String,
    #[serde(default)]
    labels: Vec<String>,
    /// Renew with work_heartbeat or it opens again.
    lease_seconds: Option<i64>,
    space_id: String,
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "work_claim_next",
        "Claims work_ready's first item for `claimant`: `{ item }`, or `{ item: null, reason }`.",
        false,
    )
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("work_claim_next", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    reply(server.service.claim_next(caller, &p.space_id, &p.claimant, &p.labels, p.lease_seconds).await)
}
