//! Server-executed AI steps: in a run whose `execution` is `server`, a step an executor would hand to the host
//! becomes an [`Effect::CallModels`] instead — the run stays `running` and its node run open while the runs layer
//! calls models — and the calls' answers come back as [`Event::ModelsAnswered`], fed to the same executor a host's
//! answer goes to (so a judge's envelope is validated, consensus retries and round-robin waves work as with a host),
//! charged from the usage the providers reported. A failed call fails the node like a failed script; a call its
//! budget cannot cover pauses the run with the step's `budgetExceeded` set until [`Event::BudgetRaised`]; a run
//! whose calling process was lost makes its calls again.
//!
//! Human steps are always handed back: a person answers them whoever runs the AI steps. So is an AI step no provider
//! serves ([`Event::HandedBack`]): it waits, paused, for a host to answer it, and a host may also answer a step paused
//! on its budget.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Answer, BudgetHold, Cost, Effect, Engine, Execution, Finish, ModelCall, PendingStep, Rejection, RunStatus};

/// How many answers the server's calls may give one visit of a node before it fails: a model whose every answer
/// is refused (a judge that never gives a valid verdict) cannot keep a run calling forever.
pub const MAX_SERVER_ROUNDS: u32 = 10;

/// A step of a server-executed run whose model calls the runs layer makes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelJob {
    /// The node run the calls are for.
    pub node_run_id: String,
    /// The step, as a host would have been handed it: the prompts, models, agents, matchups.
    pub step: PendingStep,
}

impl Engine<'_> {
    /// Whether a step executed by the server: an AI step of a server-executed run. Such a step does not pause the
    /// run; its calls are asked for.
    pub(super) fn hand_to_server(&mut self, pending: &PendingStep) -> bool {
        if self.run.execution != Execution::Server || pending.node_type == "human" {
            return false;
        }
        let Some(open) = self.run.open.as_mut() else { return false };
        open.status = RunStatus::Running;
        let mut pending = pending.clone();
        pending.budget_exceeded = None;
        pending.handed_back = None;
        let job = ModelJob { node_run_id: open.id.clone(), step: pending.clone() };
        self.run.status = RunStatus::Running;
        self.run.pending = Some(pending);
        self.effects.push(Effect::CallModels(job));
        true
    }

    /// The pending step of node run `node_run_id` the server is answering: the open node run, running in a
    /// server-executed run, or paused at a step `test_workflow` runs live.
    fn server_step(&self, node_run_id: &str) -> Result<PendingStep, Rejection> {
        let open = self.run.open.as_ref().filter(|open| open.id == node_run_id);
        let waiting = match self.run.status {
            RunStatus::Running => open.is_some_and(|o| o.status == RunStatus::Running),
            RunStatus::Paused => open.is_some_and(|o| o.status == RunStatus::Paused),
            _ => false,
        };
        match (&self.run.pending, waiting) {
            (Some(pending), true) if pending.budget_exceeded.is_none() => Ok(pending.clone()),
            _ => Err(Rejection::new("stale_step", format!("node run {node_run_id} no longer waits for model calls"))),
        }
    }

    /// Charges `calls` to the run and its open node run, as reported.
    fn charge_calls(&mut self, calls: Vec<ModelCall>) {
        for call in &calls {
            self.run.cost.add(Cost::of_call(call));
        }
        if let Some(open) = self.run.open.as_mut() {
            for call in &calls {
                open.cost.add(Cost::of_call(call));
            }
            open.calls.extend(calls);
        }
    }

    pub(super) fn models_answered(
        &mut self,
        node_run_id: &str,
        answer: Answer,
        calls: Vec<ModelCall>,
    ) -> Result<(), Rejection> {
        let pending = self.server_step(node_run_id)?;
        self.charge_calls(calls);
        let workflow = self.run.workflow.clone();
        let node = workflow.node(&pending.node_id).expect("a pending step names a node of the snapshot");
        self.measured = true;
        let submitted = self.submit(node, &pending, answer);
        self.measured = false;
        match submitted {
            Ok(step) => self.settle(step),
            Err(rejection) => {
                let message = format!("the model calls' answers were refused: {}", rejection.message);
                self.finish_open(Finish::failed(json!({ "error": message }), message.clone(), Some("model_call_failed")));
            }
        }
        let rounds = self.run.open.as_ref().filter(|open| open.id == node_run_id).map(|open| open.attempts);
        if rounds.is_some_and(|rounds| rounds >= MAX_SERVER_ROUNDS) {
            self.effects.retain(|e| !matches!(e, Effect::CallModels(_)));
            let message = format!(
                "the models gave no usable answer in {MAX_SERVER_ROUNDS} rounds for node '{}'",
                pending.node_id
            );
            self.finish_open(Finish::failed(json!({ "error": message }), message.clone(), Some("model_call_failed")));
        }
        self.drive();
        Ok(())
    }

    pub(super) fn models_failed(&mut self, node_run_id: &str, error: String, calls: Vec<ModelCall>) -> Result<(), Rejection> {
        self.server_step(node_run_id)?;
        self.charge_calls(calls);
        self.finish_open(Finish::failed(json!({ "error": error }), error.clone(), Some("model_call_failed")));
        self.drive();
        Ok(())
    }

    pub(super) fn budget_exceeded(&mut self, node_run_id: &str, hold: BudgetHold) -> Result<(), Rejection> {
        self.pause_calling(node_run_id, |pending| pending.budget_exceeded = Some(hold))
    }

    /// No provider serves the step's models here: it is handed back, and waits for a host to answer it as in a run
    /// a host started.
    pub(super) fn handed_back(&mut self, node_run_id: &str, reason: String) -> Result<(), Rejection> {
        self.pause_calling(node_run_id, |pending| pending.handed_back = Some(reason))
    }

    /// Pauses the run at the step of node run `node_run_id` its calls were for, the step marked by `mark`.
    fn pause_calling(&mut self, node_run_id: &str, mark: impl FnOnce(&mut PendingStep)) -> Result<(), Rejection> {
        let mut pending = self.server_step(node_run_id)?;
        mark(&mut pending);
        if let Some(open) = self.run.open.as_mut() {
            open.status = RunStatus::Paused;
        }
        self.run.status = RunStatus::Paused;
        self.run.pending = Some(pending);
        Ok(())
    }

    pub(super) fn budget_raised(&mut self) -> Result<(), Rejection> {
        let held = self.run.pending.clone().filter(|p| p.budget_exceeded.is_some() && self.run.status == RunStatus::Paused);
        let Some(mut pending) = held else {
            return Err(Rejection::new("not_paused", format!("run {} does not wait for its budget", self.run.id)));
        };
        pending.budget_exceeded = None;
        let asked = self.hand_to_server(&pending);
        debug_assert!(asked, "only a server-executed run pauses on its budget");
        Ok(())
    }

    /// The calls a lost process was making for a server-executed run, asked for again: model calls change nothing
    /// outside the run, so they are made anew instead of failing the run. `false` when the run was not calling.
    pub(super) fn call_again(&mut self) -> bool {
        let calling = self.run.execution == Execution::Server
            && self.run.status == RunStatus::Running
            && self.run.open.as_ref().is_some_and(|o| o.status == RunStatus::Running);
        match self.run.pending.clone().filter(|_| calling) {
            Some(pending) => self.hand_to_server(&pending),
            None => false,
        }
    }

}
