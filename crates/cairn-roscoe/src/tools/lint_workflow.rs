//! `lint_workflow`: schema + integrity validation plus the non-fatal lint pass.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::Value;

use crate::service::Subject;

use super::{RoscoeServer, SourceArg, object_tool, parse, source};

super::scoped_params! {
    /// `lint_workflow` arguments.
    struct Params {
        /// The workflow as a JSON object (give exactly one of `config`, `yaml`, `id`).
        #[schemars(with = "Option<serde_json::Map<String, Value>>")]
        #[serde(default)]
        config: Option<Value>,
        /// The workflow as YAML text.
        #[serde(default)]
        yaml: Option<String>,
        /// A stored workflow's id.
        #[serde(default)]
        id: Option<String>,
        /// With `id`: its source (default: repo first).
        #[serde(default)]
        source: Option<SourceArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "lint_workflow",
        "Schema + integrity validation plus a non-fatal lint pass: dead states, unreachable states and transitions, \
         models missing from roscoe.yaml, unknown subworkflows. Same input as validate_workflow. Returns `{ errors, \
         warnings: [{ code, message, state? }] }`; lint runs only when `errors` is empty.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("lint_workflow", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let source = source(params.source);
    server
        .run(params.scope(), move |service, scope| {
            let subject = Subject::from_inputs(params.config, params.yaml, params.id, source)?;
            service.lint_workflow(scope, &subject)
        })
        .await
}
