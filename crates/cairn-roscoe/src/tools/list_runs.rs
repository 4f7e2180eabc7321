//! `list_runs`: the caller's project's recent runs, newest first.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{RoscoeServer, object_tool, parse};
use crate::runs::ListRuns;

super::scoped_params! {
    /// `list_runs` arguments.
    struct Params {
        /// 1–200 (default 20).
        #[serde(default)]
        limit: Option<i64>,
        /// running, paused, completed, failed or cancelled.
        #[serde(default)]
        status: Option<String>,
        /// Only runs of this workflow.
        #[serde(default, alias = "workflowId")]
        workflow_id: Option<String>,
        /// With child runs (default false).
        #[serde(default, alias = "includeChildren")]
        include_children: Option<bool>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "list_runs",
        "Lists the project's runs, newest first: `[{ id, workflowId, workflowName, status, startedAt, completedAt, \
         source, workflowSource, kind, startedBy, totalCostUsd }]`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("list_runs", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let query = ListRuns {
        limit: params.limit,
        status: params.status.clone(),
        workflow_id: params.workflow_id.clone(),
        include_children: params.include_children.unwrap_or(false),
        ..ListRuns::default()
    };
    server
        .run_runs(params.scope(), move |runs, scope| async move { runs.list_runs(&scope, &query).await })
        .await
}
