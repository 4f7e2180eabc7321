//! `decisions_get_document`: one document with its body and version.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{WorkServer, parse, read_tool, reply};
use crate::auth::Caller;

/// `decisions_get_document` arguments.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    document_id: String,
    space_id: String,
}

pub(crate) fn tool() -> Tool {
    read_tool::<Params>(
        "decisions_get_document",
        "Reads a document: title, Markdown body and version (an update's base_version).",
    )
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("decisions_get_document", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let outcome = server.service.get_document(caller, &p.space_id, &p.document_id).await;
    reply(outcome.map(|document| json!({ "document": document })))
}
