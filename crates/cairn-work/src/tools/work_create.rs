//! `work_create`: make a work item in a space (title, notes, links, optionally the document it implements, its
//! priority, labels, blockers and parent); it starts open.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;
use crate::service::NewItemInput;

/// `work_create` arguments.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    /// Items of the space it waits for.
    #[serde(default)]
    blocked_by: Vec<String>,
    /// The document it implements.
    #[serde(default)]
    document_id: String,
    /// http(s) URLs, at most ten.
    #[serde(default)]
    links: Vec<String>,
    /// Up to 20.
    #[serde(default)]
    labels: Vec<String>,
    /// Up to 4000 characters.
    #[serde(default)]
    notes: String,
    #[serde(default)]
    parent_id: String,
    /// 0 (most urgent) to 4; default 2.
    priority: Option<i64>,
    space_id: String,
    /// 1 to 200 characters.
    title: String,
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "work_create",
        "Makes an open work item in a space; claim it to work on it.",
        false,
    )
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("work_create", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let input = NewItemInput {
        space_id: p.space_id,
        title: p.title,
        notes: p.notes,
        links: p.links,
        document_id: p.document_id,
        priority: p.priority,
        labels: p.labels,
        parent_id: p.parent_id,
        blocked_by: p.blocked_by,
    };
    let outcome = server.service.create_item(caller, &input).await;
    reply(outcome.map(|item| json!({ "item": item })))
}
