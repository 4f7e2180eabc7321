//! `validate_workflow`: dry-run schema + integrity validation of a given or stored workflow; no writes.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::Value;

use crate::service::Subject;

use super::{RoscoeServer, SourceArg, object_tool, parse, source};

super::scoped_params! {
    /// `validate_workflow` arguments.
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
        "validate_workflow",
        "Dry-run schema + integrity validation, no filesystem writes. Pass the full `config` or `yaml`, OR `id` (+ \
         optional `source`). Returns `{ valid: true, errors: [] }` or `{ valid: false, code, errors }`; each error \
         names the node, the line and how to fix it.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("validate_workflow", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let source = source(params.source);
    server
        .run(params.scope(), move |service, scope| {
            let subject = Subject::from_inputs(params.config, params.yaml, params.id, source)?;
            service.validate_workflow(scope, &subject)
        })
        .await
}
