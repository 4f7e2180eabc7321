//! `test_workflow`: runs a workflow end to end on mocks, in the real engine and database, then deletes the run.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};
use serde_json::Value;

use super::{RoscoeServer, SourceArg, object_tool, parse, source};
use crate::runs::TestRequest;

super::scoped_params! {
    /// `test_workflow` arguments.
    struct Params {
        /// A stored workflow's id (give exactly one of `id`, `config`, `yaml`).
        #[serde(default)]
        id: Option<String>,
        /// With `id`: its source (default: repo first).
        #[serde(default)]
        source: Option<SourceArg>,
        /// The workflow as a JSON object.
        #[schemars(with = "Option<serde_json::Map<String, Value>>")]
        #[serde(default)]
        config: Option<Value>,
        /// The workflow as YAML text.
        #[serde(default)]
        yaml: Option<String>,
        /// Run inputs.
        #[schemars(with = "Option<serde_json::Map<String, Value>>")]
        #[serde(default)]
        input: Option<Value>,
        /// Answers by node id (`<subworkflow node>/<child node>` inside child runs); a list answers visit n with
        /// element n-1. ai_agent: text or {response, failed}; ai_judge: raw envelope or {verdict, reasoning};
        /// human: transition or {transition, comment}; script: {exitCode, stdout, stderr} (not executed);
        /// consensus: {responses, retry?, aggregate?}; round_robin: {result?, verdicts?} or {winner};
        /// map: {extract?, responses, reduce?}; subworkflow: {status, output}.
        #[schemars(with = "Option<serde_json::Map<String, Value>>")]
        #[serde(default)]
        mocks: Option<Value>,
        /// Wall-clock limit in milliseconds (default 60000, at most 600000): the run is cancelled and its scripts
        /// killed when it passes.
        #[serde(default, alias = "timeoutMs")]
        timeout_ms: Option<u64>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "test_workflow",
        "Runs a workflow end to end through the real engine and database with `mocks` answering its AI, human and \
         fan-out steps, then deletes the run (test runs never appear in list_runs). Returns `{ ok: true, \
         finalStatus, durationMs, nodeTrace }` or `{ ok: false, code, message, nodeId?, nodeType?, finalStatus?, \
         durationMs?, nodeTrace?, details? }` with code invalid_input, workflow_not_found, invalid_config, \
         missing_mock (a reached step has no mock), timeout, runner_error, fanout_in_test_mode_unsupported (a \
         fan-out node without a mock) or unexpected.",
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
    server
        .run_runs(scope, move |runs, scope| async move { runs.test_workflow(&scope, request, &actor).await })
        .await
}
