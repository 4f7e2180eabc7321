//! `decisions_list_spaces`: an account's spaces, by name, with page tokens.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{WorkServer, parse, read_tool, reply};
use crate::auth::Caller;

super::account_params! {
    /// `decisions_list_spaces` arguments.
    #[serde(default)]
    struct Params {
        page_size: i64,
        page_token: String,
    }
}

pub(crate) fn tool() -> Tool {
    read_tool::<Params>(
        "decisions_list_spaces",
        "Lists the account's spaces by name.",
    )
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("decisions_list_spaces", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    reply(server.service.list_spaces(caller, &p.account_id, p.page_size, &p.page_token).await)
}
