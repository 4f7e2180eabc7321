//! `update_workflow`: validate and replace an existing workflow's contents.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use crate::service::Service;

use super::{RoscoeServer, object_tool};

super::body_params! {
    /// `update_workflow` arguments.
    struct Params {
        id: String,
        source: Option<SourceArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "update_workflow",
        "Replaces a workflow with `config` or `yaml`, validated first. Returns `{ ok, source, path }`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    server.write_body::<Params, _, _>("update_workflow", call, Service::update_workflow).await
}
