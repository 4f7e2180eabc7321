//! `create_workflow`: validate (schema + integrity) and write a new workflow file.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};
use serde_json::Value;

use crate::service::Body;

use super::{RoscoeServer, SourceArg, object_tool, parse, source};

super::scoped_params! {
    /// `create_workflow` arguments.
    struct Params {
        /// The new workflow id (file stem): 1–64 of a-z, 0-9, `_`, `-`.
        id: String,
        /// The workflow as a JSON object (give this or `yaml`).
        #[schemars(with = "Option<serde_json::Map<String, Value>>")]
        #[serde(default)]
        config: Option<Value>,
        /// The workflow as YAML text, written as given (give this or `config`).
        #[serde(default)]
        yaml: Option<String>,
        /// Where to write it: `repo` or `global` (default: repo when the project has a repo source, else global).
        #[serde(default)]
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
    let params = match parse::<Params>("create_workflow", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let source = source(params.source);
    let scope = params.scope();
    server
        .write(call.access, "create_workflow", &params.id.clone(), scope, move |service, scope, actor| {
            let body = Body::from_inputs(params.config, params.yaml)?;
            service.create_workflow(scope, &params.id, &body, source, actor)
        })
        .await
}
