//! The moves of a session's workflow stack: `start_workflow` (push), `finished_step` (outputs checked, the quality
//! gate, then the next step or the workflow's end), `abort_workflow` (pop, resuming the parent) and `go_to_step`
//! (back to an earlier step, clearing progress from there on). Each holds the session's lock from the first read to
//! the last write.

use std::path::Path;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use crate::gate::{self, GateInput};
use crate::ids::check_path_id;
use crate::platform_text;
use crate::session::WorkflowSession;
use crate::session_store::{SessionLock, SessionStore};
use crate::step_info::{ActiveStepInfo, active_step_info, resolve_inputs};

use super::stacks::Stacks;
use super::{Deepwork, Error, Result, StackEntry, require_session};

/// `start_workflow` arguments.
#[derive(Debug, Clone, Default)]
pub struct StartWorkflow {
    /// What the user wants.
    pub goal: String,
    /// Job (directory) name.
    pub job_name: String,
    /// Workflow name.
    pub workflow_name: String,
    /// Session id (a new one when absent, on every platform).
    pub session_id: Option<String>,
    /// Values for the first step's inputs.
    pub inputs: Option<IndexMap<String, Value>>,
    /// Sub-agent whose stack to use.
    pub agent_id: Option<String>,
}

/// `start_workflow` result.
#[derive(Debug, Serialize)]
pub struct WorkflowStarted {
    /// A reminder to clarify ambiguous requests.
    pub important_note: String,
    /// The first step.
    pub begin_step: ActiveStepInfo,
    /// The stack afterwards.
    pub stack: Vec<StackEntry>,
}

/// `finished_step` arguments.
#[derive(Debug, Clone, Default)]
pub struct FinishStep {
    /// Outputs by argument name.
    pub outputs: IndexMap<String, Value>,
    /// Summary of the work.
    pub work_summary: Option<String>,
    /// Reason to skip the quality gate.
    pub quality_review_override_reason: Option<String>,
    /// Session id.
    pub session_id: Option<String>,
    /// Sub-agent.
    pub agent_id: Option<String>,
}

/// `finished_step` result.
#[derive(Debug, Serialize)]
pub struct StepFinished {
    /// `needs_work`, `next_step` or `workflow_complete`.
    pub status: &'static str,
    /// Quality feedback (needs_work).
    pub feedback: Option<String>,
    /// The next step (next_step).
    pub begin_step: Option<ActiveStepInfo>,
    /// Completion message (workflow_complete).
    pub summary: Option<String>,
    /// Every output of the workflow (workflow_complete).
    pub all_outputs: Option<IndexMap<String, Value>>,
    /// What to do now (workflow_complete).
    pub post_workflow_instructions: Option<String>,
    /// The stack afterwards.
    pub stack: Vec<StackEntry>,
}

/// `abort_workflow` result.
#[derive(Debug, Serialize)]
pub struct WorkflowAborted {
    /// `job/workflow` aborted.
    pub aborted_workflow: String,
    /// Its step at the time.
    pub aborted_step: String,
    /// The reason given.
    pub explanation: String,
    /// The stack afterwards.
    pub stack: Vec<StackEntry>,
    /// The workflow now active.
    pub resumed_workflow: Option<String>,
    /// Its step.
    pub resumed_step: Option<String>,
}

/// `go_to_step` result.
#[derive(Debug, Serialize)]
pub struct WentToStep {
    /// The step to work on.
    pub begin_step: ActiveStepInfo,
    /// Steps whose progress was cleared.
    pub invalidated_steps: Vec<String>,
    /// The stack afterwards.
    pub stack: Vec<StackEntry>,
}

const NO_SESSION_TO_FINISH: &str = "No active workflow session. Provide the session_id from the start_workflow \
    response (begin_step.session_id). If you want to resume a workflow, just start it again and call finished_step \
    with quality_review_override_reason until you get back to your prior step.";
const NO_SESSION: &str = "No active workflow session. Use start_workflow to begin a workflow.";

impl Deepwork {
    /// Starts a workflow on top of the (session, agent) stack.
    pub fn start_workflow(&self, root: &Path, cmd: StartWorkflow) -> Result<WorkflowStarted> {
        let store = SessionStore::new(root, &self.config.platform);
        let given_session = cmd.session_id.as_deref().filter(|s| !s.is_empty());
        if let Some(sid) = given_session {
            check_path_id("session_id", sid).map_err(Error::Failed)?;
        }
        if let Some(agent) = &cmd.agent_id {
            check_path_id("agent_id", agent).map_err(Error::Failed)?;
        }
        let job = self.find_job(root, &store, given_session, &cmd.job_name)?;
        let workflow = job.select_workflow(&cmd.workflow_name).map_err(Error::Failed)?;
        let Some(first) = workflow.steps.first() else {
            return Err(Error::Failed(format!("Workflow '{}' has no steps", workflow.name)));
        };
        // Without an id (a host whose context holds none) the session is new; its id comes back in begin_step.
        let session_id = match given_session {
            Some(sid) => sid.to_owned(),
            None => uuid::Uuid::new_v4().simple().to_string(),
        };

        let _lock = store.lock(&session_id)?;
        let mut stacks = Stacks::load(store.clone(), &session_id, cmd.agent_id.as_deref())?;
        let mut instance = WorkflowSession::new(&session_id, &job.name, &workflow.name, &cmd.goal, &first.name);
        let inputs = resolve_inputs(first, cmd.inputs.as_ref(), &IndexMap::new(), &IndexMap::new());
        instance.start_step(&first.name, 0, inputs.clone());

        let own_was_empty = stacks.own().workflow_stack.is_empty();
        let instance_id = instance.workflow_instance_id.clone();
        if let Some(parent) = stacks.own().workflow_stack.last_mut() {
            parent.record_sub_workflow(&instance_id);
        } else if own_was_empty && stacks.agent.is_some() {
            // A sub-agent's first workflow is a sub-workflow of the main stack's active step.
            if let Some(parent) = stacks.main.workflow_stack.last_mut() {
                parent.record_sub_workflow(&instance_id);
                stacks.save_main()?;
            }
        }
        stacks.own().workflow_stack.push(instance);
        stacks.save_own()?;
        self.write_session_status(root, &store, &session_id);

        Ok(WorkflowStarted {
            important_note: platform_text::important_note(&self.config.platform).to_owned(),
            begin_step: active_step_info(&session_id, root, &job, workflow, first, &inputs),
            stack: stacks.entries(),
        })
    }

    /// Validates a step's outputs, runs the quality gate, and advances (or completes) the workflow.
    pub fn finished_step(&self, root: &Path, cmd: FinishStep) -> Result<StepFinished> {
        let (session_id, store, _lock, mut stacks) =
            self.open_session(root, cmd.session_id.as_deref(), cmd.agent_id.as_deref())?;
        let Some(top) = stacks.own().workflow_stack.last().cloned() else {
            return Err(Error::Failed(NO_SESSION_TO_FINISH.into()));
        };
        let job = self.find_job(root, &store, Some(session_id), &top.job_name)?;
        let workflow = job.select_workflow(&top.workflow_name).map_err(Error::Failed)?;
        let Some(step_index) = workflow.step_index(&top.current_step_id) else {
            return Err(Error::Failed(format!("Current step not found: {}", top.current_step_id)));
        };
        let step = &workflow.steps[step_index];
        self.check_outputs(root, &job, step, &cmd.outputs)?;

        let input_values = top.step_progress.get(&step.name).map(|p| p.input_values.clone()).unwrap_or_default();
        let override_reason = cmd.quality_review_override_reason.as_deref().filter(|r| !r.trim().is_empty());
        if override_reason.is_none() {
            let gate_input = GateInput {
                root,
                job: &job,
                workflow,
                step,
                outputs: &cmd.outputs,
                input_values: &input_values,
                work_summary: cmd.work_summary.as_deref(),
            };
            let project = self.project_rules(root);
            let feedback = gate::run(&gate_input, &project.rules, &self.config.platform, self.config.names.reviewer_agent())
                .map_err(|err| Error::Failed(format!("Could not write the review instruction files: {err}")))?;
            if let Some(feedback) = feedback {
                let active = stacks.own().workflow_stack.last_mut().expect("the stack has a top");
                active.record_needs_work();
                stacks.save_own()?;
                self.write_session_status(root, &store, session_id);
                return Ok(StepFinished {
                    status: "needs_work",
                    feedback: Some(feedback),
                    begin_step: None,
                    summary: None,
                    all_outputs: None,
                    post_workflow_instructions: None,
                    stack: stacks.entries(),
                });
            }
        }

        let active = stacks.own().workflow_stack.last_mut().expect("the stack has a top");
        active.complete_current_step(cmd.outputs.clone(), cmd.work_summary.clone());
        let next_index = active.current_step_index + 1;
        let result = if next_index >= workflow.steps.len() {
            let all_outputs = active.merged_outputs();
            stacks.own().pop("completed", None);
            StepFinished {
                status: "workflow_complete",
                feedback: None,
                begin_step: None,
                summary: Some(format!("Workflow '{}' completed successfully!", workflow.name)),
                all_outputs: Some(all_outputs),
                post_workflow_instructions: workflow.post_workflow_instructions.clone(),
                stack: Vec::new(),
            }
        } else {
            let next = &workflow.steps[next_index];
            let available = active.merged_outputs();
            let inputs = resolve_inputs(next, None, &available, &IndexMap::new());
            active.start_step(&next.name, next_index, inputs.clone());
            StepFinished {
                status: "next_step",
                feedback: None,
                begin_step: Some(active_step_info(session_id, root, &job, workflow, next, &inputs)),
                summary: None,
                all_outputs: None,
                post_workflow_instructions: None,
                stack: Vec::new(),
            }
        };
        stacks.save_own()?;
        self.write_session_status(root, &store, session_id);
        Ok(StepFinished { stack: stacks.entries(), ..result })
    }

    /// Aborts the active workflow of the (session, agent) stack and resumes its parent.
    pub fn abort_workflow(&self, root: &Path, explanation: String, session_id: Option<String>, agent_id: Option<String>) -> Result<WorkflowAborted> {
        let (session_id, store, _lock, mut stacks) =
            self.open_session(root, session_id.as_deref(), agent_id.as_deref())?;
        let Some(aborted) = stacks.own().pop("aborted", Some(explanation.clone())) else {
            return Err(Error::Failed(NO_SESSION.into()));
        };
        stacks.save_own()?;
        self.write_session_status(root, &store, session_id);
        let resumed = stacks.own().workflow_stack.last().map(|w| (w.label(), w.current_step_id.clone()));
        Ok(WorkflowAborted {
            aborted_workflow: aborted.label(),
            aborted_step: aborted.current_step_id.clone(),
            explanation,
            stack: stacks.entries(),
            resumed_workflow: resumed.as_ref().map(|r| r.0.clone()),
            resumed_step: resumed.map(|r| r.1),
        })
    }

    /// Goes back to an earlier (or the current) step, clearing progress from there on.
    pub fn go_to_step(&self, root: &Path, step_id: String, session_id: Option<String>, agent_id: Option<String>) -> Result<WentToStep> {
        let (session_id, store, _lock, mut stacks) =
            self.open_session(root, session_id.as_deref(), agent_id.as_deref())?;
        let Some(top) = stacks.own().workflow_stack.last().cloned() else {
            return Err(Error::Failed(NO_SESSION.into()));
        };
        let job = self.find_job(root, &store, Some(session_id), &top.job_name)?;
        let workflow = job.select_workflow(&top.workflow_name).map_err(Error::Failed)?;
        let Some(target) = workflow.step_index(&step_id) else {
            let names: Vec<&str> = workflow.steps.iter().map(|s| s.name.as_str()).collect();
            return Err(Error::Failed(format!(
                "Step '{step_id}' not found in workflow '{}'. Available steps: {}",
                workflow.name,
                names.join(", ")
            )));
        };
        if target > top.current_step_index {
            return Err(Error::Failed(format!(
                "Cannot go forward to step '{step_id}' (index {target} > current {}). Use finished_step to advance forward.",
                top.current_step_index
            )));
        }
        let invalidated: Vec<String> = workflow.steps[target..].iter().map(|s| s.name.clone()).collect();
        let active = stacks.own().workflow_stack.last_mut().expect("the stack has a top");
        let previous = active.step_progress.get(&step_id).map(|p| p.input_values.clone()).unwrap_or_default();
        for name in &invalidated {
            active.step_progress.shift_remove(name);
        }
        let step = &workflow.steps[target];
        let inputs = resolve_inputs(step, None, &active.merged_outputs(), &previous);
        active.start_step(&step.name, target, inputs.clone());
        stacks.save_own()?;
        self.write_session_status(root, &store, session_id);
        Ok(WentToStep {
            begin_step: active_step_info(session_id, root, &job, workflow, step, &inputs),
            invalidated_steps: invalidated,
            stack: stacks.entries(),
        })
    }

    /// What a move of an existing session's stack does first: checks the session and agent ids, takes the session's
    /// lock (held while the returned guard lives) and loads its stacks.
    fn open_session<'a>(
        &self,
        root: &Path,
        session_id: Option<&'a str>,
        agent_id: Option<&str>,
    ) -> Result<(&'a str, SessionStore, SessionLock, Stacks)> {
        let session_id = require_session(session_id, || self.missing_session(root), Error::Failed)?;
        if let Some(agent) = agent_id {
            check_path_id("agent_id", agent).map_err(Error::Failed)?;
        }
        let store = SessionStore::new(root, &self.config.platform);
        let lock = store.lock(session_id)?;
        let stacks = Stacks::load(store.clone(), session_id, agent_id)?;
        Ok((session_id, store, lock, stacks))
    }
}
