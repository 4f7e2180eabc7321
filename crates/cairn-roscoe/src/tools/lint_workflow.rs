//! `lint_workflow`: schema + integrity validation plus the non-fatal lint pass.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, object_tool, parse};

super::subject_params! {
    /// `lint_workflow` arguments.
    struct Params {}
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
    server.run(params.scope(), move |service, scope| service.lint_workflow(scope, &params.subject()?)).await
}
