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
        "validate_workflow plus lint warnings (dead or unreachable states, unknown models and subworkflows): `{ \
         errors, warnings }`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("lint_workflow", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    server.run(params.scope(), move |service, scope| service.lint_workflow(scope, &params.subject()?)).await
}
