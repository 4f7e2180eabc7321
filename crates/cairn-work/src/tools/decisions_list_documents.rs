//! `decisions_list_documents`: a space's documents (without bodies), latest change first, with page tokens.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{WorkServer, parse, read_tool, reply};
use crate::auth::Caller;

super::account_params! {
    /// `decisions_list_documents` arguments.
    struct Params {
        #[serde(default)]
        page_size: i64,
        #[serde(default)]
        page_token: String,
        /// Titles containing this (any case).
        #[serde(default)]
        query: String,
        space_id: String,
    }
}

pub(crate) fn tool() -> Tool {
    read_tool::<Params>(
        "decisions_list_documents",
        "Lists a space's documents, latest change first, without bodies (decisions_get_document).",
    )
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("decisions_list_documents", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let service = &server.service;
    reply(service.list_documents(caller, &p.account_id, &p.space_id, &p.query, p.page_size, &p.page_token).await)
}
