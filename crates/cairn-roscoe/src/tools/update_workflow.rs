//! `update_workflow`: validate and replace an existing workflow's contents.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use crate::service::Service;

use super::{RoscoeServer, object_tool};

super::body_params! {
    /// `update_workflow` arguments.
    struct Params {
        /// The workflow id (its file stem).
        id: String,
        /// The source of the file to replace (default: the one that resolves, repo first).
        source: Option<SourceArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "update_workflow",
        "Replaces an existing workflow's contents with `config` or `yaml`. Validates schema + integrity and refuses \
         to write on either failure. Returns `{ ok: true, source, path }`. Error codes: not_found, invalid_config, \
         integrity_error, no_repo_source, io_error.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    server.write_body::<Params, _, _>("update_workflow", call, Service::update_workflow).await
}
