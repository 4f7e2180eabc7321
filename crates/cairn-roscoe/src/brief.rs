//! Brief answers: what the run tools leave out of their MCP answers by default, so that an agent reads what it needs
//! and not the same thing twice. Every field the seed defines as always there stays; what goes is a repeat (a node's
//! output again in the run's context, a host step's cost object beside its flat figures, a pending step's transitions
//! beside its validTransitions), a null, an empty list, a zero that says nothing, and `urlNote` after the first time
//! in a session. `get_run_history` and `test_workflow` with `detail: "full"` answer everything.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value};

/// The fields of a run in `get_run_history` the seed defines (kept even when null or empty).
const RUN_FIELDS: &[&str] = &[
    "id", "workflowId", "workflowName", "status", "startedAt", "completedAt", "source", "workflowSource", "context",
    "parentRunId", "childRunIds", "awaitingChild",
];

/// The fields of a node run (in `nodes`, `children` and `nodeTrace`) the seed defines.
const NODE_FIELDS: &[&str] = &[
    "id", "nodeId", "nodeType", "status", "startedAt", "completedAt", "durationMs", "attempts", "input", "output",
    "error", "children",
];

/// An AdvanceResult made brief: `urlNote` only the first time this session (`shown` remembers), and in the pending
/// step no `transitions` (but for a human step, whose targets' labels help the person choose), no `workflowId` of
/// the root's own step, no first `iteration` and no zero `attempt`.
pub(crate) fn advance_result(value: &mut Value, shown: &AtomicBool) {
    let Value::Object(result) = value else { return };
    if result.contains_key("urlNote") && shown.swap(true, Ordering::Relaxed) {
        result.remove("urlNote");
    }
    let root = result.get("runId").cloned();
    let Some(Value::Object(step)) = result.get_mut("pendingStep") else { return };
    if step.get("nodeType").and_then(Value::as_str) != Some("human") {
        step.remove("transitions");
    }
    if root.is_some() && step.get("runId") == root.as_ref() {
        step.remove("workflowId");
    }
    if step.get("iteration").and_then(Value::as_u64) == Some(1) {
        step.remove("iteration");
    }
    if step.get("attempt").and_then(Value::as_u64) == Some(0) {
        step.remove("attempt");
    }
}

/// A `get_run_history` answer made brief: the run without its nodes' outputs again in `context.nodes` and without
/// empty extras, every node run as [`node`] makes it.
pub(crate) fn history(value: &mut Value) {
    if let Some(Value::Object(run)) = value.get_mut("run") {
        if let Some(Value::Object(context)) = run.get_mut("context") {
            context.remove("nodes");
        }
        if let Some(Value::Object(cost)) = run.get_mut("cost") {
            cost.retain(|_, figure| !is_zero(figure));
        }
        drop_empty(run, RUN_FIELDS);
    }
    if let Some(Value::Array(nodes)) = value.get_mut("nodes") {
        nodes.iter_mut().for_each(node);
    }
}

/// A `test_workflow` answer made brief: each entry of its `nodeTrace` as [`node`] makes it.
pub(crate) fn test_result(value: &mut Value) {
    if let Some(Value::Array(trace)) = value.get_mut("nodeTrace") {
        trace.iter_mut().for_each(node);
    }
}

/// A node run made brief: no empty extras, no `cost` object for the host's work (an estimate its `costUsd`,
/// `inputTokens` and `outputTokens` already say; the calls the server paid for keep theirs), and its children
/// likewise.
fn node(value: &mut Value) {
    let Value::Object(node_run) = value else { return };
    let paid = node_run.get("cost").and_then(|c| c.get("billingMode")).and_then(Value::as_str);
    if !matches!(paid, Some("metered" | "mixed")) {
        node_run.remove("cost");
    }
    drop_empty(node_run, NODE_FIELDS);
    if let Some(Value::Array(children)) = node_run.get_mut("children") {
        children.iter_mut().for_each(node);
    }
}

/// Removes the fields of `object` that `keep` does not name and that hold nothing: null, an empty list or object.
fn drop_empty(object: &mut Map<String, Value>, keep: &[&str]) {
    object.retain(|key, value| keep.contains(&key.as_str()) || !is_empty(value));
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.is_empty(),
        _ => false,
    }
}

fn is_zero(value: &Value) -> bool {
    value.as_f64() == Some(0.0)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_url_note_comes_once_and_a_pending_step_loses_its_repeats() {
        let shown = AtomicBool::new(false);
        let answer = |node_type: &str| {
            json!({"runId": "r", "status": "paused", "urlNote": "start a server", "pendingStep": {
                "runId": "r", "nodeId": "a", "nodeType": node_type, "prompt": "p", "validTransitions": ["success"],
                "transitions": [{"event": "success", "target": "b"}], "iteration": 1, "attempt": 0,
                "workflowId": "w"}, "totalCostUsd": 0.0})
        };
        let mut first = answer("ai_agent");
        advance_result(&mut first, &shown);
        assert_eq!(
            first,
            json!({"runId": "r", "status": "paused", "urlNote": "start a server", "pendingStep": {
                "runId": "r", "nodeId": "a", "nodeType": "ai_agent", "prompt": "p", "validTransitions": ["success"]},
                "totalCostUsd": 0.0})
        );
        let mut human = answer("human");
        advance_result(&mut human, &shown);
        assert!(human.get("urlNote").is_none(), "{human}");
        assert!(human["pendingStep"].get("transitions").is_some(), "a person's choice keeps its targets");
    }

    #[test]
    fn a_history_keeps_the_seed_fields_and_drops_repeats_and_empties() {
        let mut trace = json!({
            "run": {"id": "r", "parentRunId": null, "childRunIds": [], "awaitingChild": null, "error": null,
                "budget": null, "context": {"nodes": {"a": {"text": "x"}}, "input": {"t": 1}},
                "cost": {"totalCostUsd": 0.5, "cacheReadTokens": 0}},
            "nodes": [{"id": "n", "nodeId": "a", "output": {"text": "x"}, "error": null, "phase": null,
                "calls": [], "cost": {"totalCostUsd": 0.5}, "costUsd": 0.5, "children": [
                    {"id": "c", "nodeId": "a#0", "warnings": null, "children": []}]}]
        });
        history(&mut trace);
        assert_eq!(
            trace,
            json!({
                "run": {"id": "r", "parentRunId": null, "childRunIds": [], "awaitingChild": null,
                    "context": {"input": {"t": 1}}, "cost": {"totalCostUsd": 0.5}},
                "nodes": [{"id": "n", "nodeId": "a", "output": {"text": "x"}, "error": null, "costUsd": 0.5,
                    "children": [{"id": "c", "nodeId": "a#0", "children": []}]}]
            })
        );
    }
}
