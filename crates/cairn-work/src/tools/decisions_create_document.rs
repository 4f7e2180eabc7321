//! `decisions_create_document`: make a Markdown document in a space, at version 1.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;

/// `decisions_create_document` arguments.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    /// Markdown, up to 512 KiB.
    #[serde(default)]
    body: String,
    space_id: String,
    /// 1 to 200 characters.
    title: String,
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "decisions_create_document",
        "Makes a Markdown document at version 1; work_status checks its table rows with a State (or Status) and a \
         PRs column.",
        false,
    )
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("decisions_create_document", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let outcome = server.service.create_document(caller, &p.space_id, &p.title, &p.body).await;
    reply(outcome.map(|document| json!({ "document": document })))
}
