//! `work_status`: check what is really built — a document's pieces with the state each claims, the state its
//! evidence shows, and a finding where they disagree.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{WorkServer, parse, read_tool, reply};
use crate::auth::Caller;

/// `work_status` arguments.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    document_id: String,
    /// Of its pull requests (default: the account's).
    #[serde(default)]
    repository: String,
    space_id: String,
}

pub(crate) fn tool() -> Tool {
    read_tool::<Params>(
        "work_status",
        "What is really built: a document's pieces (table rows with a state column), each with its claimed state, \
         the state evidence shows and a finding where they disagree.",
    )
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("work_status", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    reply(server.service.status(caller, &p.space_id, &p.document_id, &p.repository).await)
}
