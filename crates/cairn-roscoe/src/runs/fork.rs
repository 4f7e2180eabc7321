//! `fork_run`: a new run of the same workflow version from any node of an earlier run. Its context holds every output
//! the original produced before that node's last start (and the visits counted so far), its input is the original's,
//! and it goes on from that node as a run just started would; the original run is left as it is. Both runs' action
//! logs link them (`fork` on each, naming the other). Forking a subworkflow child is refused: fork its root run.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use cairn_store::runs::{self as rows, NodeRunRow, RunRow};

use super::effects::Executor;
use super::lease::LEASE_MS;
use super::prepare::Starter;
use super::tree::Tree;
use super::view::AdvanceResult;
use super::{Runs, run_subject};
use crate::actor::Actor;
use crate::clock::now_ms;
use crate::definition::NodeType;
use crate::engine::{Context, Event, RunStatus};
use crate::error::Error;
use crate::scope::Scope;

impl Runs {
    /// `fork_run`: starts a new run of run `run_id`'s workflow version from `from_node_id` (see the module doc) and
    /// drives it as `start_workflow` does. A workflow with `script` nodes needs an actor that may run scripts.
    pub async fn fork_run(
        &self,
        scope: &Scope,
        run_id: &str,
        from_node_id: &str,
        actor: &Actor,
    ) -> Result<AdvanceResult, Error> {
        let original = self.load_scoped(scope, run_id).await?;
        if original.parent_run_id.is_some() {
            return Err(Error::InvalidInput(format!(
                "run {run_id} is a subworkflow child; fork its root run {} (from the node that called it, or earlier)",
                original.root_run_id
            )));
        }
        let (workflow, _) = self.inner.snapshots.decode(&original.workflow_id, &original.workflow_snapshot)?;
        if !actor.may_exec && workflow.nodes.iter().any(|n| n.kind == NodeType::Script) {
            return Err(Error::InsufficientScope(actor.exec_refusal(&format!("workflow '{}'", original.workflow_id))));
        }
        let nodes = {
            let mut conn = self.inner.store.read().await?;
            rows::node_runs(&mut conn, run_id).await?
        };
        let context = forked_context(&nodes, from_node_id).ok_or_else(|| {
            let mut ran: Vec<&str> = Vec::new();
            for node in nodes.iter().filter(|n| n.parent_node_run_id.is_none()) {
                if !ran.contains(&node.node_id.as_str()) {
                    ran.push(&node.node_id);
                }
            }
            Error::InvalidInput(format!(
                "node '{from_node_id}' never started in run {run_id}, so there is nothing to fork from; nodes that \
                 started: {}",
                if ran.is_empty() { "none".to_owned() } else { ran.join(", ") }
            ))
        })?;
        let row = self.forked_row(&original, &context, actor);
        let fork_id = row.id.clone();
        self.insert(&row).await?;
        let link = json!({ "runId": run_id, "nodeId": from_node_id });
        self.record(actor, "fork", &run_subject(&fork_id), json!({ "forkedFrom": link })).await?;
        let forked = json!({ "forkRunId": fork_id, "fromNodeId": from_node_id });
        self.record(actor, "fork", &run_subject(run_id), forked).await?;
        let mut tree = Tree::new(&fork_id, vec![row]);
        let start = Event::StartAt { node_id: from_node_id.to_owned() };
        self.drive_with(&fork_id, start, &Executor { background: true }, &mut tree).await?;
        self.result(&tree, scope).await
    }

    /// The new run's row: the original's workflow version, input, project, execution and budget, started now by
    /// `actor`, with `context`.
    fn forked_row(&self, original: &RunRow, context: &Context, actor: &Actor) -> RunRow {
        let id = crate::clock::new_id();
        let now = now_ms();
        let starter = Starter::of(actor);
        RunRow {
            root_run_id: id.clone(),
            id,
            source: starter.origin,
            status: RunStatus::Running.as_str().to_owned(),
            current_node_id: None,
            pending_step: None,
            awaiting_child_run_id: None,
            context: serde_json::to_string(context).expect("contexts serialize"),
            output: None,
            error: None,
            error_code: None,
            owner_pid: Some(i64::from(self.inner.pid)),
            lease_expires_at: Some(now + LEASE_MS),
            attempt: 1,
            total_cost_usd: 0.0,
            metered_cost_usd: 0.0,
            subscription_equiv_cost_usd: 0.0,
            billing_mode: "none".into(),
            input_tokens: 0,
            output_tokens: 0,
            started_at: now,
            completed_at: None,
            updated_at: now,
            started_by: starter.name,
            exec_allowed: starter.exec_allowed,
            usage: None,
            version: 0,
            ..original.clone()
        }
    }
}

/// The context a fork from `from_node_id` starts with: the latest output of every node run of the original's own
/// (not its fan-out children's) that ended before the last start of `from_node_id`, and each node's visits so far;
/// `None` when that node never started.
fn forked_context(nodes: &[NodeRunRow], from_node_id: &str) -> Option<Context> {
    let top: Vec<&NodeRunRow> = nodes.iter().filter(|n| n.parent_node_run_id.is_none()).collect();
    let from = top.iter().filter(|n| n.node_id == from_node_id).map(|n| n.seq).max()?;
    let mut outputs = Map::new();
    let mut iterations: BTreeMap<String, u32> = BTreeMap::new();
    for node in top.iter().filter(|n| n.seq < from) {
        *iterations.entry(node.node_id.clone()).or_default() += 1;
        if matches!(node.status.as_str(), "completed" | "failed")
            && let Some(output) = node.output.as_deref().and_then(|o| serde_json::from_str::<Value>(o).ok())
        {
            outputs.insert(node.node_id.clone(), output);
        }
    }
    Some(Context { nodes: outputs, iterations, steps: 0, seq: 0 })
}
