//! `get_workflow_schema`: the workflow JSON Schema, the executors, the models of `roscoe.yaml`, the gotchas.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, object_tool, parse};

super::scoped_params! {
    /// `get_workflow_schema` arguments: the scope only (it picks the project's `roscoe.yaml`).
    struct Params {
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "get_workflow_schema",
        "Returns the workflow YAML's JSON Schema, node types, permitted models and authoring gotchas. Call once \
         before writing a workflow.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("get_workflow_schema", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    server
        .run(params.scope(), |service, scope| {
            Ok(service.workflow_schema(scope))
        })
        .await
}
