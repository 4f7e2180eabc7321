//! The shapes run tools return (seed "AdvanceResult shape", "Run observability"; §9.1, §13.4), built from rows.

use cairn_store::audit::AuditRow;
use cairn_store::runs::{NodeRunRow, RunListRow, RunRow};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::clock::rfc3339;
use super::convert::{node_usage, run_cost};
use crate::engine::{Cost, PendingStep};

/// The shared result of the run lifecycle tools.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdvanceResult {
    /// The root run of the tree.
    pub run_id: String,
    /// Its status.
    pub status: String,
    /// Deep link to the run page.
    pub url: String,
    /// How to open `url` when no running `cairn serve` is known to serve it (absent when one is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url_note: Option<String>,
    /// The deepest pending step, while paused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_step: Option<PendingStep>,
    /// While paused at a human step with `timeoutMs`: when it takes its `timeout` route unanswered (RFC 3339; the
    /// server's timer, `get_run_status` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_at: Option<String>,
    /// Whether the run was started with `ask_person`: its human steps go to the person through the client's form.
    #[serde(skip)]
    pub ask_person: bool,
    /// While paused waiting out a node's `delayMs` (no pending step): when the run goes on by itself (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumes_at: Option<String>,
    /// The run output, once completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// The failure reason; or the problem with a submitted answer (then `code` is set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The failure code of a failed or cancelled run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// The code of a submission problem (`invalid_response`, `invalid_verdicts`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// While the root waits on a subworkflow: `{ childRunId }`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub awaiting_child: Option<Value>,
    /// For a host that cannot spawn subagents, at a fan-out step: how to produce the independent answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_hint: Option<Value>,
    /// Extra fields of a submission problem (e.g. `rejected`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// `meteredCostUsd + subscriptionEquivCostUsd` over the tree.
    pub total_cost_usd: f64,
    /// USD billed to an API key.
    pub metered_cost_usd: f64,
    /// List-price equivalent of the host's work.
    pub subscription_equiv_cost_usd: f64,
    /// `none`, `subscription`, `metered` or `mixed`.
    pub billing_mode: String,
    /// Input tokens over the tree.
    pub input_tokens: i64,
    /// Output tokens over the tree.
    pub output_tokens: i64,
}

/// `workflow` of `start_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkflowInfo {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Description.
    pub description: Option<String>,
}

/// The result of `start_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Started {
    /// The AdvanceResult.
    #[serde(flatten)]
    pub result: AdvanceResult,
    /// The workflow started.
    pub workflow: WorkflowInfo,
    /// A ready-to-send opening line with the live URL.
    pub narration: String,
}

/// One entry of `list_runs`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    /// Run id.
    pub id: String,
    /// Workflow id.
    pub workflow_id: String,
    /// Workflow name.
    pub workflow_name: String,
    /// Status.
    pub status: String,
    /// RFC 3339.
    pub started_at: String,
    /// RFC 3339.
    pub completed_at: Option<String>,
    /// Who started it.
    pub source: String,
    /// Where the workflow came from.
    pub workflow_source: String,
    /// `user` (test runs are never listed).
    pub kind: String,
    /// The principal that started it (`Ada (person)`), when known.
    pub started_by: Option<String>,
    /// The run's own model spend in USD (its child runs' not included).
    pub total_cost_usd: f64,
}

/// The result of `get_run_history`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct History {
    /// The run.
    pub run: Value,
    /// Its top-level node runs in execution order, children nested.
    pub nodes: Vec<Value>,
    /// Who did what to its tree, oldest first: `{ at, action, principal, via, detail }` for each start, human
    /// decision, cancel and retry.
    pub actions: Vec<Value>,
}

/// The run of `tree` that owns the pending step: the root, or down its `awaiting_child` chain.
pub(crate) fn deepest<'t>(tree: &'t [RunRow], root_id: &str) -> &'t RunRow {
    let mut current = tree.iter().find(|r| r.id == root_id).unwrap_or(&tree[0]);
    while let Some(child) = current
        .awaiting_child_run_id
        .as_deref()
        .and_then(|id| tree.iter().find(|r| r.id == id))
    {
        current = child;
    }
    current
}

/// What is known of the host from its MCP client name (§9.6): `{ clientName, subagents, billing }`.
pub(crate) fn host(client: Option<&str>) -> Value {
    let name = client.unwrap_or_default();
    let lower = name.to_lowercase();
    let (subagents, billing) = if lower.contains("claude-code") || lower.contains("cowork") {
        (true, "subscription")
    } else if lower.contains("claude-ai") || lower.contains("claude desktop") {
        (false, "metered")
    } else {
        (false, "unknown")
    };
    json!({ "clientName": name, "subagents": subagents, "billing": billing })
}

/// The hint for a host without subagents, `None` for one that has them.
pub(crate) fn host_hint(host: &Value) -> Option<Value> {
    if host["subagents"] == json!(true) {
        return None;
    }
    Some(json!({
        "kind": "no_subagents",
        "billing": host["billing"],
        "message": "This workflow fans out to several independent agents. If you cannot spawn subagents, produce each \
                    agent's answer as a separate completion, one after another, never letting one answer see another \
                    — or hand the run to a host that can (Claude Code).",
    }))
}

pub(crate) fn advance_result(tree: &[RunRow], root_id: &str, url: &str) -> AdvanceResult {
    let root = tree.iter().find(|r| r.id == root_id).unwrap_or(&tree[0]);
    let pending_step: Option<PendingStep> = (root.status == "paused")
        .then(|| deepest(tree, root_id))
        .and_then(|r| r.pending_step.as_deref())
        .and_then(|p| serde_json::from_str(p).ok());
    let fanout = pending_step
        .as_ref()
        .is_some_and(|p| matches!(p.node_type.as_str(), "consensus" | "round_robin" | "map"));
    let host = root.host.as_deref().and_then(|h| serde_json::from_str::<Value>(h).ok());
    let host_hint = host.as_ref().filter(|_| fanout).and_then(host_hint);
    let mut cost = Cost::default();
    for row in tree {
        cost.add(run_cost(row));
    }
    AdvanceResult {
        run_id: root.id.clone(),
        status: root.status.clone(),
        url: url.to_owned(),
        url_note: None,
        pending_step,
        timeout_at: None,
        ask_person: host.as_ref().is_some_and(|h| h["askPerson"] == true),
        resumes_at: None,
        output: (root.status == "completed")
            .then(|| root.output.as_deref().and_then(|o| serde_json::from_str(o).ok()))
            .flatten(),
        error: root.error.clone().filter(|_| root.status != "completed"),
        error_code: root.error_code.clone(),
        code: None,
        awaiting_child: root
            .awaiting_child_run_id
            .as_ref()
            .map(|id| json!({ "childRunId": id })),
        host_hint,
        extra: Map::new(),
        total_cost_usd: cost.total_usd(),
        metered_cost_usd: cost.metered_usd,
        subscription_equiv_cost_usd: cost.subscription_usd,
        billing_mode: cost.billing_mode().to_owned(),
        input_tokens: cost.input_tokens,
        output_tokens: cost.output_tokens,
    }
}

pub(crate) fn summary(row: RunListRow) -> RunSummary {
    RunSummary {
        id: row.id,
        workflow_id: row.workflow_id,
        workflow_name: row.workflow_name,
        status: row.status,
        started_at: rfc3339(row.started_at),
        completed_at: row.completed_at.map(rfc3339),
        source: row.source,
        workflow_source: row.workflow_source,
        kind: row.kind,
        started_by: row.started_by,
        total_cost_usd: row.total_cost_usd,
    }
}

fn parsed(text: &Option<String>) -> Value {
    text.as_deref()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(Value::Null)
}

pub(crate) fn run_value(row: &RunRow, children: Vec<String>) -> Value {
    let mut context: Value = serde_json::from_str(&row.context).unwrap_or(json!({}));
    if let Value::Object(map) = &mut context {
        map.remove("seq");
        map.insert("input".into(), serde_json::from_str(&row.input).unwrap_or(Value::Null));
    }
    json!({
        "id": row.id,
        "workflowId": row.workflow_id,
        "workflowName": row.workflow_name,
        "status": row.status,
        "startedAt": rfc3339(row.started_at),
        "completedAt": row.completed_at.map(rfc3339),
        "source": row.source,
        "startedBy": row.started_by,
        "workflowSource": row.workflow_source,
        "kind": row.kind,
        "context": context,
        "output": parsed(&row.output),
        "error": row.error,
        "errorCode": row.error_code,
        "attempt": row.attempt,
        "parentRunId": row.parent_run_id,
        "childRunIds": children,
        "awaitingChild": row.awaiting_child_run_id.as_ref().map(|id| json!({ "childRunId": id })),
        "currentNodeId": row.current_node_id,
        "execution": row.execution,
        "budget": parsed(&row.budget),
        "cost": cost_value(&run_cost(row)),
    })
}

/// Node runs as nested values: the top level in execution order, each with its `children`.
pub(crate) fn node_values(nodes: &[NodeRunRow]) -> Vec<Value> {
    fn value(n: &NodeRunRow, all: &[NodeRunRow]) -> Value {
        let (cost, calls) = node_usage(n);
        // The slowest call: the node waited for all of them, made at once.
        let latency = calls.iter().map(|c| c.latency_ms).max();
        let children: Vec<Value> = all
            .iter()
            .filter(|c| c.parent_node_run_id.as_deref() == Some(n.id.as_str()))
            .map(|c| value(c, all))
            .collect();
        json!({
            "id": n.id,
            "nodeId": n.node_id,
            "nodeType": n.node_type,
            "status": n.status,
            "startedAt": rfc3339(n.started_at),
            "completedAt": n.completed_at.map(rfc3339),
            "durationMs": n.duration_ms,
            "attempts": n.attempts,
            "iteration": n.iteration,
            "input": parsed(&n.input),
            "output": parsed(&n.output),
            "error": n.error,
            "event": n.event,
            "phase": n.phase,
            "model": n.model,
            "warnings": parsed(&n.warnings),
            "childRunId": n.child_run_id,
            "costUsd": n.cost_usd,
            "inputTokens": n.input_tokens,
            "outputTokens": n.output_tokens,
            "cost": cost_value(&cost),
            "calls": calls,
            "latencyMs": latency,
            "children": children,
        })
    }
    nodes
        .iter()
        .filter(|n| n.parent_node_run_id.is_none())
        .map(|n| value(n, nodes))
        .collect()
}

/// A cost as run and node values show it: USD split by billing, tokens, calls, and calls without a known price.
pub(crate) fn cost_value(cost: &Cost) -> Value {
    json!({
        "totalCostUsd": cost.total_usd(),
        "meteredCostUsd": cost.metered_usd,
        "subscriptionEquivCostUsd": cost.subscription_usd,
        "billingMode": cost.billing_mode(),
        "inputTokens": cost.input_tokens,
        "outputTokens": cost.output_tokens,
        "cacheReadTokens": cost.cache_read_tokens,
        "cacheCreationTokens": cost.cache_creation_tokens,
        "unpricedCalls": cost.unpriced_calls,
    })
}

pub(crate) fn history(row: &RunRow, children: Vec<String>, nodes: &[NodeRunRow], actions: &[AuditRow]) -> History {
    History {
        run: run_value(row, children),
        nodes: node_values(nodes),
        actions: actions
            .iter()
            .map(|a| {
                json!({
                    "at": rfc3339(a.ts),
                    "action": a.action,
                    "principal": a.principal,
                    "via": a.via,
                    "detail": serde_json::from_str::<Value>(&a.detail).unwrap_or(Value::Null),
                })
            })
            .collect(),
    }
}
