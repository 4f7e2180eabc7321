//! `work_status`: check what is really built — a document's pieces with the state each claims, the state its
//! evidence shows, and a finding where they disagree.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{WorkServer, parse, read_tool, reply};
use crate::auth::Caller;

/// `work_status` arguments.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    /// The document's id (decisions_list_documents).
    document_id: String,
    /// The repository its pull requests are in; empty is the account's default.
    #[serde(default)]
    repository: String,
    /// The space's id (decisions_list_spaces).
    space_id: String,
}

pub(crate) fn tool() -> Tool {
    read_tool::<Params>(
        "work_status",
        "Check what is really built. A document's pieces (the rows of its tables with a state column), each with the \
         state it claims, the state its evidence shows (implemented, merged, partial, planned or unchecked) and a \
         finding where they disagree, such as \"claims implemented; not merged: #742\". Use it before trusting what \
         a document says is live.",
    )
    .with_title("Check what is really built")
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("work_status", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    reply(server.service.status(caller, &p.space_id, &p.document_id, &p.repository).await)
}
