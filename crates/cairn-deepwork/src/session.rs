//! Workflow session state: the stack file format DeepWork uses, and the operations on it.
//!
//! One file holds one stack (the main stack in `state.json`, each sub-agent's in `agent_<id>.json`). The top of the
//! stack is the active workflow; a finished or aborted workflow moves to `completed_workflows`. Field names and order
//! are DeepWork's, so its tools (and people) can read cairn's state and the other way round. Pure data: no I/O here.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The contents of one stack file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StackFile {
    /// Bottom first; the last entry is the active workflow.
    #[serde(default)]
    pub workflow_stack: Vec<WorkflowSession>,
    /// Workflows that completed or were aborted (written once there is one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub completed_workflows: Vec<WorkflowSession>,
}

/// One running (or finished) workflow instance.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkflowSession {
    /// Session the instance belongs to.
    pub session_id: String,
    /// Unique id of this instance (32 hex digits).
    pub workflow_instance_id: String,
    /// Job name.
    pub job_name: String,
    /// Workflow name.
    pub workflow_name: String,
    /// What the user wants.
    pub goal: String,
    /// Current step id.
    pub current_step_id: String,
    /// Index of the current step.
    pub current_step_index: usize,
    /// Progress per step id.
    #[serde(default)]
    pub step_progress: IndexMap<String, StepProgress>,
    /// Every start of a step, in order.
    #[serde(default)]
    pub step_history: Vec<StepHistoryEntry>,
    /// When the instance started.
    pub started_at: String,
    /// When it completed or was aborted.
    pub completed_at: Option<String>,
    /// `active`, `completed` or `aborted`.
    pub status: String,
    /// Why it was aborted.
    pub abort_reason: Option<String>,
}

/// Progress of one step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepProgress {
    /// Step id.
    pub step_id: String,
    /// When the step (last) started.
    pub started_at: Option<String>,
    /// When it finished.
    pub completed_at: Option<String>,
    /// Outputs given to finished_step.
    #[serde(default)]
    pub outputs: IndexMap<String, Value>,
    /// Work summary given to finished_step.
    pub work_summary: Option<String>,
    /// Input values resolved when the step started.
    #[serde(default)]
    pub input_values: IndexMap<String, Value>,
    /// How many times the quality gate sent the step back.
    #[serde(default)]
    pub quality_attempts: u32,
    /// Workflows started while this step was current.
    #[serde(default)]
    pub sub_workflow_instance_ids: Vec<String>,
}

/// One start of a step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepHistoryEntry {
    /// Step id.
    pub step_id: String,
    /// When it started.
    pub started_at: Option<String>,
    /// When it finished.
    pub finished_at: Option<String>,
    /// Workflows started during it.
    #[serde(default)]
    pub sub_workflow_instance_ids: Vec<String>,
}

/// Now, as DeepWork writes it: `2026-11-30T05:24:52.195733+00:00`.
pub fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.6f+00:00").to_string()
}

impl WorkflowSession {
    /// A new active instance positioned on its first step.
    pub fn new(session_id: &str, job_name: &str, workflow_name: &str, goal: &str, first_step: &str) -> Self {
        WorkflowSession {
            session_id: session_id.to_owned(),
            workflow_instance_id: uuid::Uuid::new_v4().simple().to_string(),
            job_name: job_name.to_owned(),
            workflow_name: workflow_name.to_owned(),
            goal: goal.to_owned(),
            current_step_id: first_step.to_owned(),
            current_step_index: 0,
            step_progress: IndexMap::new(),
            step_history: Vec::new(),
            started_at: now(),
            completed_at: None,
            status: "active".into(),
            abort_reason: None,
        }
    }

    /// `job/workflow`, as stacks show it.
    pub fn label(&self) -> String {
        format!("{}/{}", self.job_name, self.workflow_name)
    }

    /// Makes `step_id` (at `index`) current, with the given input values, and records the start.
    pub fn start_step(&mut self, step_id: &str, index: usize, input_values: IndexMap<String, Value>) {
        let started = now();
        match self.step_progress.get_mut(step_id) {
            Some(progress) => {
                progress.started_at = Some(started.clone());
                if !input_values.is_empty() {
                    progress.input_values = input_values;
                }
            }
            None => {
                self.step_progress.insert(
                    step_id.to_owned(),
                    StepProgress {
                        step_id: step_id.to_owned(),
                        started_at: Some(started.clone()),
                        completed_at: None,
                        outputs: IndexMap::new(),
                        work_summary: None,
                        input_values,
                        quality_attempts: 0,
                        sub_workflow_instance_ids: Vec::new(),
                    },
                );
            }
        }
        self.step_history.push(StepHistoryEntry {
            step_id: step_id.to_owned(),
            started_at: Some(started),
            finished_at: None,
            sub_workflow_instance_ids: Vec::new(),
        });
        self.current_step_id = step_id.to_owned();
        self.current_step_index = index;
    }

    /// Records the current step's outputs and summary.
    pub fn complete_current_step(&mut self, outputs: IndexMap<String, Value>, work_summary: Option<String>) {
        let finished = now();
        let step_id = self.current_step_id.clone();
        let progress = self.progress_mut(&step_id);
        progress.completed_at = Some(finished.clone());
        progress.outputs = outputs;
        progress.work_summary = work_summary;
        if let Some(last) = self.step_history.last_mut()
            && last.step_id == step_id
        {
            last.finished_at = Some(finished);
        }
    }

    /// Counts one more round of quality feedback on the current step.
    pub fn record_needs_work(&mut self) {
        let step_id = self.current_step_id.clone();
        self.progress_mut(&step_id).quality_attempts += 1;
    }

    /// Notes that a workflow instance was started while the current step was active.
    pub fn record_sub_workflow(&mut self, instance_id: &str) {
        let step_id = self.current_step_id.clone();
        self.progress_mut(&step_id).sub_workflow_instance_ids.push(instance_id.to_owned());
        if let Some(last) = self.step_history.last_mut()
            && last.step_id == step_id
        {
            last.sub_workflow_instance_ids.push(instance_id.to_owned());
        }
    }

    /// Outputs of all steps of this instance, later steps overriding earlier ones.
    pub fn merged_outputs(&self) -> IndexMap<String, Value> {
        let mut merged = IndexMap::new();
        for progress in self.step_progress.values() {
            for (name, value) in &progress.outputs {
                merged.insert(name.clone(), value.clone());
            }
        }
        merged
    }

    fn progress_mut(&mut self, step_id: &str) -> &mut StepProgress {
        self.step_progress.entry(step_id.to_owned()).or_insert_with(|| StepProgress {
            step_id: step_id.to_owned(),
            started_at: None,
            completed_at: None,
            outputs: IndexMap::new(),
            work_summary: None,
            input_values: IndexMap::new(),
            quality_attempts: 0,
            sub_workflow_instance_ids: Vec::new(),
        })
    }
}

impl StackFile {
    /// Removes the active workflow, stamps it `status` (and `reason`), and files it under completed workflows.
    pub fn pop(&mut self, status: &str, reason: Option<String>) -> Option<WorkflowSession> {
        let mut finished = self.workflow_stack.pop()?;
        finished.completed_at = Some(now());
        finished.status = status.to_owned();
        finished.abort_reason = reason;
        self.completed_workflows.push(finished.clone());
        Some(finished)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_lifecycle_is_recorded() {
        let mut wf = WorkflowSession::new("s", "j", "w", "g", "a");
        wf.start_step("a", 0, IndexMap::from([("x".to_owned(), Value::from("1"))]));
        wf.record_needs_work();
        wf.complete_current_step(IndexMap::from([("y".to_owned(), Value::from("f.md"))]), Some("did".into()));
        assert_eq!(wf.step_progress["a"].quality_attempts, 1);
        assert!(wf.step_history[0].finished_at.is_some());
        assert_eq!(wf.merged_outputs()["y"], "f.md");
        assert_eq!(wf.workflow_instance_id.len(), 32);
    }

    #[test]
    fn completed_workflows_are_omitted_until_there_is_one() {
        let mut file = StackFile::default();
        assert_eq!(serde_json::to_string(&file).unwrap(), r#"{"workflow_stack":[]}"#);
        file.workflow_stack.push(WorkflowSession::new("s", "j", "w", "g", "a"));
        let popped = file.pop("aborted", Some("why".into())).unwrap();
        assert_eq!(popped.status, "aborted");
        assert_eq!(file.completed_workflows.len(), 1);
    }
}
