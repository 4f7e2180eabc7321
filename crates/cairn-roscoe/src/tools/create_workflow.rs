//! `create_workflow`: validate (schema + integrity) and write a new workflow file.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use crate::service::Service;

use super::{RoscoeServer, object_tool};

super::body_params! {
    /// `create_workflow` arguments.
    struct Params {
        /// New id: 1–64 of a-z, 0-9, `_`, `-`.
        id: String,
        /// Default: repo if the project has one.
        source: Option<SourceArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "create_workflow",
        "Writes a new workflow from `config` or `yaml`, validated first: `{ id, source, path, warnings? }`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    server.write_body::<Params, _, _>("create_workflow", call, Service::create_workflow).await
}
