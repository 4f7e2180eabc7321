//! `decisions_update_document`: change a document's title or body against the version read; every version is kept.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;

/// `decisions_update_document` arguments.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    /// The version you read (decisions_get_document); a document changed since is a conflict.
    base_version: i64,
    /// The new Markdown body; empty leaves it, a single newline empties it.
    #[serde(default)]
    body: String,
    /// The document's id (decisions_list_documents).
    document_id: String,
    /// The space's id (decisions_list_spaces).
    space_id: String,
    /// The new title; empty leaves it.
    #[serde(default)]
    title: String,
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "decisions_update_document",
        "Update a document. Change a document's title or body; base_version is the version you read, and if the \
         document changed since, the call is refused (conflict, with the current version) so nothing is overwritten. \
         Every version is kept.",
        true,
    )
    .with_title("Update a document")
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("decisions_update_document", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let service = &server.service;
    let outcome = service.update_document(caller, &p.space_id, &p.document_id, p.base_version, &p.title, &p.body).await;
    reply(outcome.map(|document| json!({ "document": document })))
}
