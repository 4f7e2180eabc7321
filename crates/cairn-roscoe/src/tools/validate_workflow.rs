//! `validate_workflow`: dry-run schema + integrity validation of a given or stored workflow; no writes.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, object_tool, parse};

super::subject_params! {
    /// `validate_workflow` arguments.
    struct Params {}
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "validate_workflow",
        "Validates `config`, `yaml` or a stored `id` without writing. Returns `{ valid, errors }`; each error names \
         its node, line and fix.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("validate_workflow", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    server.run(params.scope(), move |service, scope| service.validate_workflow(scope, &params.subject()?)).await
}
