//! `test_workflow`: runs a workflow end to end on mocks, in the real engine and database, then deletes the run.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};
use serde_json::Value;

use super::{DetailArg, RoscoeServer, SourceArg, object_tool, parse, reshaped, source};
use crate::brief;
use crate::runs::TestRequest;

super::scoped_params! {
    /// `test_workflow` arguments.
    struct Params {
        /// A stored workflow's id (or `config`, `yaml`).
        #[serde(default)]
        id: Option<String>,
        /// Of `id` (default: repo first).
        #[serde(default)]
        source: Option<SourceArg>,
        /// The workflow as JSON (or `yaml`, `id`).
        #[schemars(with = "Option<serde_json::Map<String, Value>>")]
        #[serde(default)]
        config: Option<Value>,
        #[serde(default)]
        yaml: Option<String>,
        #[schemars(with = "Option<serde_json::Map<String, Value>>")]
        #[serde(default)]
        input: Option<Value>,
        /// Answers by node id (`<subworkflow node>/<node>` in child runs; a list answers visit n with item n-1);
        /// shapes: get_doc guides/testing-workflows.
        #[schemars(with = "Option<serde_json::Map<String, Value>>")]
        #[serde(default)]
        mocks: Option<Value>,
        /// Milliseconds (default 60000, at most 600000).
        #[serde(default, alias = "timeoutMs")]
        timeout_ms: Option<u64>,
        /// `full`: every field (default `brief`).
        #[serde(default)]
        detail: Option<DetailArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "test_workflow",
        "Runs a workflow on the real engine with `mocks` for its AI, human and fan-out steps, then deletes the run: \
         `{ ok, finalStatus, durationMs, nodeTrace }` or `{ ok: false, code, message }`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("test_workflow", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let scope = params.scope();
    let request = TestRequest {
        id: params.id,
        source: source(params.source),
        config: params.config,
        yaml: params.yaml,
        input: params.input,
        mocks: params.mocks,
        timeout_ms: params.timeout_ms,
    };
    let actor = super::actor(call.access);
    let answer = server
        .run_runs(scope, move |runs, scope| async move { runs.test_workflow(&scope, request, &actor).await })
        .await;
    match params.detail.unwrap_or_default() {
        DetailArg::Brief => reshaped(answer, brief::test_result),
        DetailArg::Full => answer,
    }
}
