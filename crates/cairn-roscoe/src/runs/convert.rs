//! Between the engine's values and the store's rows: runs, node runs and workflow snapshots.
//!
//! A snapshot is the JSON `{ "workflow": <config>, "models": <ModelSettings> }` taken at start; decoding re-parses
//! the config into a [`Workflow`], which a small cache keeps so the hot path does not re-parse it per call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cairn_store::runs::{NodeRunRow, RunRow};
use serde_json::Value;

use crate::error::Error;
use crate::definition::{self, Workflow};
use crate::engine::{Context, Cost, Execution, ModelCall, ModelSettings, NodeRun, PendingStep, Run, RunStatus};

/// A decoded snapshot.
type Decoded = (Arc<Workflow>, Arc<ModelSettings>);

/// Parsed snapshots by their text.
#[derive(Debug, Default)]
pub(crate) struct SnapshotCache {
    parsed: Mutex<HashMap<String, Decoded>>,
}

const CACHE_LIMIT: usize = 256;

impl SnapshotCache {
    /// The workflow and model settings of a snapshot.
    pub(crate) fn decode(
        &self,
        workflow_id: &str,
        snapshot: &str,
    ) -> Result<Decoded, Error> {
        if let Some(found) = self.parsed.lock().expect("cache lock").get(snapshot) {
            return Ok(found.clone());
        }
        let value: Value = serde_json::from_str(snapshot)
            .map_err(|e| Error::Internal(format!("run snapshot is not JSON: {e}")))?;
        let config = serde_json::to_string(&value["workflow"]).unwrap_or_default();
        let workflow = definition::parse(&config, Some(workflow_id)).map_err(|errors| {
            Error::Internal(format!(
                "the run's workflow snapshot no longer parses ({} problem(s))",
                errors.len()
            ))
        })?;
        let models: ModelSettings =
            serde_json::from_value(value["models"].clone()).unwrap_or_default();
        let entry = (Arc::new(workflow), Arc::new(models));
        let mut cache = self.parsed.lock().expect("cache lock");
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(snapshot.to_owned(), entry.clone());
        Ok(entry)
    }
}

/// The snapshot text of a workflow config and model settings.
pub(crate) fn snapshot(config: &Value, models: &ModelSettings) -> String {
    serde_json::json!({ "workflow": config, "models": models }).to_string()
}

fn json_or_null(text: Option<&str>) -> Option<Value> {
    text.and_then(|t| serde_json::from_str(t).ok())
}

/// A stored run (and its open node run) as the engine's [`Run`].
pub(crate) fn run_from_row(
    row: &RunRow,
    open: Option<&NodeRunRow>,
    cache: &SnapshotCache,
) -> Result<Run, Error> {
    let (workflow, models) = cache.decode(&row.workflow_id, &row.workflow_snapshot)?;
    let status = RunStatus::from_name(&row.status)
        .ok_or_else(|| Error::Internal(format!("run {} has status '{}'", row.id, row.status)))?;
    let context: Context = serde_json::from_str(&row.context).unwrap_or_default();
    let pending: Option<PendingStep> = row
        .pending_step
        .as_deref()
        .and_then(|p| serde_json::from_str(p).ok());
    Ok(Run {
        id: row.id.clone(),
        project_id: row.project_id.clone(),
        project_root: row.project_root.clone(),
        root_run_id: row.root_run_id.clone(),
        parent_run_id: row.parent_run_id.clone(),
        parent_node_run_id: row.parent_node_run_id.clone(),
        depth: row.depth as u32,
        workflow,
        models,
        workflow_source: row.workflow_source.clone(),
        workflow_path: row.workflow_path.clone(),
        workflow_dir: row.workflow_dir.clone(),
        source: row.source.clone(),
        kind: row.kind.clone(),
        started_by: row.started_by.clone(),
        exec_allowed: row.exec_allowed,
        execution: Execution::from_name(&row.execution).unwrap_or_default(),
        status,
        current_node: row.current_node_id.clone(),
        pending,
        awaiting_child: row.awaiting_child_run_id.clone(),
        input: serde_json::from_str(&row.input).unwrap_or(Value::Null),
        context,
        output: json_or_null(row.output.as_deref()),
        error: row.error.clone(),
        error_code: row.error_code.clone(),
        cost: run_cost(row),
        started_at: row.started_at,
        completed_at: row.completed_at,
        attempt: row.attempt.max(1) as u32,
        open: open.map(node_from_row),
    })
}

/// The row of `run`, keeping the fields the engine does not own from `base`.
pub(crate) fn run_to_row(run: &Run, base: &RunRow, now: i64) -> RunRow {
    let mut row = base.clone();
    row.status = run.status.as_str().to_owned();
    row.current_node_id = run.current_node.clone();
    row.pending_step = run
        .pending
        .as_ref()
        .map(|p| serde_json::to_string(p).expect("pending steps serialize"));
    row.awaiting_child_run_id = run.awaiting_child.clone();
    row.input = run.input.to_string();
    row.context = serde_json::to_string(&run.context).expect("contexts serialize");
    row.output = run.output.as_ref().map(Value::to_string);
    row.error = run.error.clone();
    row.error_code = run.error_code.clone();
    row.metered_cost_usd = run.cost.metered_usd;
    row.subscription_equiv_cost_usd = run.cost.subscription_usd;
    row.total_cost_usd = run.cost.total_usd();
    row.billing_mode = run.cost.billing_mode().to_owned();
    row.input_tokens = run.cost.input_tokens;
    row.output_tokens = run.cost.output_tokens;
    row.usage = Some(serde_json::to_string(&run.cost).expect("costs serialize"));
    row.completed_at = run.completed_at;
    row.attempt = i64::from(run.attempt);
    row.updated_at = now;
    if run.status != RunStatus::Running {
        row.owner_pid = None;
        row.lease_expires_at = None;
    }
    row
}

/// A stored node run as the engine's [`NodeRun`].
pub(crate) fn node_from_row(row: &NodeRunRow) -> NodeRun {
    let usage: NodeUsage = row.usage.as_deref().and_then(|u| serde_json::from_str(u).ok()).unwrap_or_default();
    NodeRun {
        id: row.id.clone(),
        parent: row.parent_node_run_id.clone(),
        seq: row.seq,
        node_id: row.node_id.clone(),
        node_type: row.node_type.clone(),
        status: RunStatus::from_name(&row.status).unwrap_or(RunStatus::Failed),
        iteration: row.iteration as u32,
        attempts: row.attempts as u32,
        phase: row.phase.clone(),
        phase_state: json_or_null(row.phase_state.as_deref()).unwrap_or(Value::Null),
        model: row.model.clone(),
        input: json_or_null(row.input.as_deref()),
        output: json_or_null(row.output.as_deref()),
        error: row.error.clone(),
        event: row.event.clone(),
        warnings: json_or_null(row.warnings.as_deref())
            .and_then(|w| serde_json::from_value(w).ok())
            .unwrap_or_default(),
        child_run_id: row.child_run_id.clone(),
        started_at: row.started_at,
        completed_at: row.completed_at,
        cost: usage.cost.unwrap_or(Cost {
            subscription_usd: row.cost_usd.unwrap_or(0.0),
            input_tokens: row.input_tokens.unwrap_or(0),
            output_tokens: row.output_tokens.unwrap_or(0),
            ..Cost::default()
        }),
        calls: usage.calls,
    }
}

/// The cost and model calls of a stored node run: its `usage`, else its cost columns.
pub(crate) fn node_usage(row: &NodeRunRow) -> (Cost, Vec<ModelCall>) {
    let node = node_from_row(row);
    (node.cost, node.calls)
}

/// The cost of a stored run: its `usage` (rows written since usage was kept), else its cost columns.
pub(crate) fn run_cost(row: &RunRow) -> Cost {
    row.usage.as_deref().and_then(|u| serde_json::from_str(u).ok()).unwrap_or(Cost {
        metered_usd: row.metered_cost_usd,
        subscription_usd: row.subscription_equiv_cost_usd,
        input_tokens: row.input_tokens,
        output_tokens: row.output_tokens,
        ..Cost::default()
    })
}

/// What a node run's `usage` column holds: its cost and the model calls made for it.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct NodeUsage {
    #[serde(default)]
    cost: Option<Cost>,
    #[serde(default)]
    calls: Vec<ModelCall>,
}

/// The row of a node run of `run_id`.
pub(crate) fn node_to_row(node: &NodeRun, run_id: &str) -> NodeRunRow {
    let json = |v: &Option<Value>| v.as_ref().map(Value::to_string);
    NodeRunRow {
        id: node.id.clone(),
        run_id: run_id.to_owned(),
        parent_node_run_id: node.parent.clone(),
        seq: node.seq,
        node_id: node.node_id.clone(),
        node_type: node.node_type.clone(),
        status: node.status.as_str().to_owned(),
        iteration: i64::from(node.iteration),
        attempts: i64::from(node.attempts),
        phase: node.phase.clone(),
        phase_state: (!node.phase_state.is_null()).then(|| node.phase_state.to_string()),
        model: node.model.clone(),
        input: json(&node.input),
        output: json(&node.output),
        error: node.error.clone(),
        event: node.event.clone(),
        warnings: (!node.warnings.is_empty()).then(|| serde_json::json!(node.warnings).to_string()),
        child_run_id: node.child_run_id.clone(),
        started_at: node.started_at,
        completed_at: node.completed_at,
        duration_ms: node.completed_at.map(|end| end - node.started_at),
        cost_usd: Some(node.cost.total_usd()),
        input_tokens: Some(node.cost.input_tokens),
        output_tokens: Some(node.cost.output_tokens),
        usage: Some(
            serde_json::to_string(&NodeUsage { cost: Some(node.cost), calls: node.calls.clone() })
                .expect("usage serializes"),
        ),
    }
}
