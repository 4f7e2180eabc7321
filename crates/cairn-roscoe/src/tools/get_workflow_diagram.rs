//! `get_workflow_diagram`: a stored or given workflow as Mermaid text plus its nodes and edges.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::Value;

use crate::error::Error;
use crate::service::Subject;

use super::{RoscoeServer, SourceArg, object_tool, parse, source};

super::scoped_params! {
    /// `get_workflow_diagram` arguments.
    struct Params {
        /// The workflow as JSON (or `yaml`, `id`).
        #[schemars(with = "Option<serde_json::Map<String, Value>>")]
        #[serde(default)]
        config: Option<Value>,
        #[serde(default)]
        yaml: Option<String>,
        #[serde(default)]
        id: Option<String>,
        /// Of `id` (default: repo first).
        #[serde(default)]
        source: Option<SourceArg>,
        /// Alone: draw this run's workflow with its node statuses.
        #[serde(default, alias = "runId")]
        run_id: Option<String>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "get_workflow_diagram",
        "Draws a workflow (`id`, `config` or `yaml`) or a run's (`run_id`, with node statuses): `{ mermaid, nodes, \
         edges }`; show `mermaid` to the user.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("get_workflow_diagram", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    if let Some(run_id) = params.run_id.clone() {
        if params.config.is_some() || params.yaml.is_some() || params.id.is_some() {
            return super::failure(Error::InvalidInput("pass `run_id` alone, or one of `config`, `yaml`, `id`".into()).body());
        }
        return server
            .run_runs(params.scope(), move |runs, scope| async move { runs.run_diagram(&scope, &run_id).await })
            .await;
    }
    let source = source(params.source);
    server
        .run(params.scope(), move |service, scope| {
            let subject = Subject::from_inputs(params.config, params.yaml, params.id, source)?;
            service.workflow_diagram(scope, &subject)
        })
        .await
}
