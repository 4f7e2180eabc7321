//! `update_workflow`: validate and replace an existing workflow's contents.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};
use serde_json::Value;

use crate::service::Body;

use super::{RoscoeServer, SourceArg, object_tool, parse, source};

super::scoped_params! {
    /// `update_workflow` arguments.
    struct Params {
        /// The workflow id (its file stem).
        id: String,
        /// The workflow as a JSON object (give this or `yaml`).
        #[schemars(with = "Option<serde_json::Map<String, Value>>")]
        #[serde(default)]
        config: Option<Value>,
        /// The workflow as YAML text, written as given (give this or `config`).
        #[serde(default)]
        yaml: Option<String>,
        /// The source of the file to replace (default: the one that resolves, repo first).
        #[serde(default)]
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
    let params = match parse::<Params>("update_workflow", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let source = source(params.source);
    let scope = params.scope();
    server
        .write(call.access, "update_workflow", &params.id.clone(), scope, move |service, scope, actor| {
            let body = Body::from_inputs(params.config, params.yaml)?;
            service.update_workflow(scope, &params.id, &body, source, actor)
        })
        .await
}
