//! `create_workflow`: validate (schema + integrity) and write a new workflow file.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use crate::service::Service;

use super::{RoscoeServer, object_tool};

super::body_params! {
    /// `create_workflow` arguments.
    struct Params {
        /// The new workflow id (file stem): 1–64 of a-z, 0-9, `_`, `-`.
        id: String,
        /// Where to write it: `repo` or `global` (default: repo when the project has a repo source, else global).
        source: Option<SourceArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "create_workflow",
        "Writes a new workflow YAML file from `config` (an object) or `yaml` (text). Validates schema + integrity \
         before writing; lint warnings come back as `warnings`. Returns `{ id, source, path }`. Error codes: \
         invalid_id, invalid_config, integrity_error (see `details`), conflict, no_repo_source, io_error. Call \
         get_workflow_schema first for the format.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    server.write_body::<Params, _, _>("create_workflow", call, Service::create_workflow).await
}
