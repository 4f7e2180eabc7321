//! `decisions_update_document`: change a document's title or body against the version read; every version is kept.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;

/// `decisions_update_document` arguments.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    /// The version you read.
    base_version: i64,
    /// Markdown; a single newline empties it.
    #[serde(default)]
    body: String,
    document_id: String,
    space_id: String,
    #[serde(default)]
    title: String,
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "decisions_update_document",
        "Changes a document's title or body from `base_version`; one changed since is a conflict, nothing \
         overwritten.",
        true,
    )
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
