//! A run's lifecycle: starting at `initial`, finishing — completed with its outputs rendered, or failed with a code —
//! and, from outside, cancelling (its running script killed), retrying a failed or cancelled top-level run from the
//! node it stopped at, and failing a run whose runner was lost. These only change the run's state; moving on through
//! the nodes afterwards is the machine's ([`super::machine`]).

use serde_json::{Map, Value, json};

use super::{Effect, Engine, Rejection, render};
use super::RunStatus;

impl Engine<'_> {
    /// Starts the run at its workflow's `initial` node (once).
    pub(super) fn start(&mut self) -> Result<(), Rejection> {
        if self.run.status != RunStatus::Running || self.run.context.steps > 0 {
            return Err(Rejection::new("invalid_input", "the run has already started"));
        }
        self.run.current_node = Some(self.run.workflow.initial.clone());
        Ok(())
    }

    /// Starts a fork at `node_id` instead of `initial` (its context was filled from the run it forks).
    pub(super) fn start_at(&mut self, node_id: &str) -> Result<(), Rejection> {
        self.start()?;
        if self.run.workflow.nodes.iter().all(|n| n.id != node_id) {
            return Err(Rejection::new("invalid_input", format!("the workflow has no node '{node_id}'")));
        }
        self.run.current_node = Some(node_id.to_owned());
        Ok(())
    }

    pub(super) fn complete_run(&mut self) {
        let workflow = self.run.workflow.clone();
        let output = if workflow.outputs.is_empty() {
            self.run
                .current_node
                .as_ref()
                .and_then(|id| self.run.context.nodes.get(id))
                .cloned()
                .unwrap_or(Value::Null)
        } else {
            let mut outputs = Map::new();
            for (name, template) in &workflow.outputs {
                let value = render::value(self, template).unwrap_or(Value::Null);
                outputs.insert(name.clone(), value);
            }
            Value::Object(outputs)
        };
        self.run.output = Some(output);
        self.end(RunStatus::Completed);
    }

    pub(super) fn fail_run(&mut self, code: &str, message: impl Into<String>) {
        if let Some(mut open) = self.run.open.take() {
            open.status = RunStatus::Failed;
            open.completed_at = Some(self.env.now());
            self.records.push(open);
        }
        self.run.error = Some(message.into());
        self.run.error_code = Some(code.to_owned());
        self.end(RunStatus::Failed);
    }

    fn end(&mut self, status: RunStatus) {
        self.run.status = status;
        self.run.pending = None;
        self.run.awaiting_child = None;
        self.run.completed_at = Some(self.env.now());
        if let Some(parent_run_id) = self.run.parent_run_id.clone() {
            self.effects.push(Effect::NotifyParent { parent_run_id });
        }
    }

    pub(super) fn cancel(&mut self, reason: Option<String>) -> Result<(), Rejection> {
        if self.run.status.is_terminal() {
            return Err(Rejection::new(
                "terminal",
                format!("Run is already {}.", self.run.status.as_str()),
            ));
        }
        if let Some(mut open) = self.run.open.take() {
            if let Some(pid) = open.phase_state.get("pid").and_then(Value::as_u64) {
                self.effects.push(Effect::Kill { pid: pid as u32 });
            }
            open.status = RunStatus::Cancelled;
            open.completed_at = Some(self.env.now());
            open.error = Some("cancelled".into());
            self.records.push(open);
        }
        self.run.error = Some(reason.unwrap_or_else(|| "Cancelled by user".into()));
        self.run.error_code = Some("cancelled".into());
        self.run.status = RunStatus::Cancelled;
        self.run.pending = None;
        self.run.awaiting_child = None;
        self.run.completed_at = Some(self.env.now());
        Ok(())
    }

    pub(super) fn retry(&mut self) -> Result<(), Rejection> {
        if !matches!(self.run.status, RunStatus::Failed | RunStatus::Cancelled) {
            return Err(Rejection::new(
                "not_retryable",
                format!(
                    "Run is {}; only a failed or cancelled run can be retried.",
                    self.run.status.as_str()
                ),
            ));
        }
        if let Some(parent) = &self.run.parent_run_id {
            return Err(Rejection::new(
                "not_retryable",
                format!(
                    "run {} is a subworkflow child; retry its root run {} instead",
                    self.run.id, self.run.root_run_id
                ),
            )
            .with("parentRunId", json!(parent)));
        }
        let node = self
            .run
            .current_node
            .clone()
            .unwrap_or_else(|| self.run.workflow.initial.clone());
        if let Some(visits) = self.run.context.iterations.get_mut(&node) {
            *visits = visits.saturating_sub(1);
        }
        self.run.current_node = Some(node);
        self.run.context.steps = 0;
        self.run.status = RunStatus::Running;
        self.run.error = None;
        self.run.error_code = None;
        self.run.output = None;
        self.run.completed_at = None;
        self.run.attempt += 1;
        Ok(())
    }

    /// Fails the running run whose process stopped (`runner_lost`); its node is not re-executed — unless the
    /// process was making model calls for a server-executed run, which are made again.
    pub(super) fn runner_lost(&mut self) -> Result<(), Rejection> {
        if self.run.status != RunStatus::Running {
            return Err(Rejection::new("not_running", "the run is not running"));
        }
        if self.call_again() {
            return Ok(());
        }
        if let Some(open) = self.run.open.as_mut() {
            open.status = RunStatus::Failed;
            open.error = Some("the process running this node stopped".into());
            open.completed_at = Some(self.env.now());
        }
        let open = self.run.open.take();
        self.records.extend(open);
        self.fail_run(
            "runner_lost",
            "the server process executing this run stopped before the node finished; the node was not re-executed. \
             Call retry_run to run it again",
        );
        Ok(())
    }
}
