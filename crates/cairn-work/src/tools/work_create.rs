//! `work_create`: make a work item in a space (title, notes, links, optionally the document it implements); it starts
//! open.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;

/// `work_create` arguments.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    /// The document it implements.
    #[serde(default)]
    document_id: String,
    /// http(s) URLs (pull requests, runs, designs), at most ten.
    #[serde(default)]
    links: Vec<String>,
    /// Up to 4000 characters.
    #[serde(default)]
    notes: String,
    space_id: String,
    /// 1 to 200 characters.
    title: String,
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "work_create",
        "Makes an open work item in a space (title, notes, links, the document it implements); claim it to work on \
         it.",
        false,
    )
    .with_title("Make a work item")
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("work_create", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let outcome = server.service.create_item(caller, &p.space_id, &p.title, &p.notes, &p.links, &p.document_id).await;
    reply(outcome.map(|item| json!({ "item": item })))
}
