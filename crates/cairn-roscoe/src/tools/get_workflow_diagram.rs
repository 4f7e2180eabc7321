//! `get_workflow_diagram`: a stored or given workflow as Mermaid text plus its nodes and edges.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::Value;

use crate::error::Error;
use crate::service::Subject;

use super::{RoscoeServer, SourceArg, object_tool, parse, source};

super::scoped_params! {
    /// `get_workflow_diagram` arguments.
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
        /// A run whose node statuses to overlay: the run's own (snapshotted) workflow is drawn, each node with the
        /// status of its latest visit. Give it alone (without `config` / `yaml` / `id`).
        #[serde(default, alias = "runId")]
        run_id: Option<String>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "get_workflow_diagram",
        "Draws a workflow: returns `{ mermaid, nodes: [{ id, type, label }], edges: [{ from, event, to }] }`, where \
         `mermaid` is a `flowchart TD` you can show the user. Pass `id` (+ optional `source`) for a stored workflow, \
         or `config` / `yaml` for a draft (a draft that breaks integrity rules is still drawn), or `run_id` to draw a \
         run's workflow with each node's `status` (running, paused, completed, failed, cancelled) overlaid.",
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
