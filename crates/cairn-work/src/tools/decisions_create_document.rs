//! `decisions_create_document`: make a Markdown document in a space, at version 1.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;

/// `decisions_create_document` arguments.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    /// Markdown, up to 512 KiB. Pieces are rows of tables with a State (or Status) column and a PRs column.
    #[serde(default)]
    body: String,
    /// The space's id (decisions_list_spaces).
    space_id: String,
    /// Its title, 1 to 200 characters.
    title: String,
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "decisions_create_document",
        "Make a document. Make a Markdown document in a space: title and body. It starts at version 1. Pieces of \
         work are rows of its tables with a State (or Status) column and a PRs column, which work_status checks.",
        false,
    )
    .with_title("Make a document")
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("decisions_create_document", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let outcome = server.service.create_document(caller, &p.space_id, &p.title, &p.body).await;
    reply(outcome.map(|document| json!({ "document": document })))
}
