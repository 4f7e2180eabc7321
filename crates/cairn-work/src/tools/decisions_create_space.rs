//! `decisions_create_space`: make a space in an account; the same name again returns the existing space.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;

super::account_params! {
    /// `decisions_create_space` arguments.
    struct Params {
        /// Up to 2000 characters.
        #[serde(default)]
        description: String,
        /// 1 to 100 characters, unique in the account (any case).
        name: String,
    }
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "decisions_create_space",
        "Makes a space for documents and work items; an existing name returns it (created: false).",
        true,
    )
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("decisions_create_space", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    reply(server.service.create_space(caller, &p.account_id, &p.name, &p.description).await)
}
