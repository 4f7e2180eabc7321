//! The active workflows of every session in a project: what an agent needs to resume after its context was
//! compacted, and what the web UI lists.

use std::path::Path;

use serde_json::Value;

use crate::platform_text;
use crate::session::WorkflowSession;
use crate::session_store::{SessionStore, read_stack};

use super::Deepwork;

impl Deepwork {
    /// Active workflows of every session under `root` (all platforms, main stacks), newest first: what an agent needs
    /// to resume after its context was compacted.
    pub fn active_sessions(&self, root: &Path) -> Vec<Value> {
        active_workflows(root, None).iter().map(|wf| self.describe_active(root, wf)).collect()
    }

    /// The active workflows of one session, as [`Deepwork::active_sessions`] shows them: what `deepwork hook
    /// startup_context` hands the model after a compaction.
    pub fn session_stack(&self, root: &Path, session_id: &str) -> Vec<Value> {
        let mut all = self.active_sessions(root);
        all.retain(|workflow| workflow["session_id"] == session_id);
        all
    }

    /// What a call that needs a session id but got none is told: the sessions of this platform with an active
    /// workflow in the project, newest first (the ids it can pass), or how to get an id when there are none.
    pub(super) fn missing_session(&self, root: &Path) -> String {
        let active = active_workflows(root, Some(&self.config.platform));
        if active.is_empty() {
            return "session_id is required. No workflow is active in this project: start_workflow starts one and \
                    returns its session id (begin_step.session_id); pass that id to every later call."
                .to_owned();
        }
        let mut seen = Vec::new();
        let mut listed = Vec::new();
        for wf in &active {
            if seen.contains(&&wf.session_id) {
                continue;
            }
            seen.push(&wf.session_id);
            if listed.len() < MAX_LISTED_SESSIONS {
                listed.push(format!(
                    "`{}` ({}, step {}, goal: {})",
                    wf.session_id,
                    wf.label(),
                    wf.current_step_id,
                    wf.goal
                ));
            }
        }
        let more = seen.len() - listed.len();
        let more = if more > 0 { format!("; and {more} older") } else { String::new() };
        format!(
            "session_id is required. {} Sessions with an active workflow in this project, newest first: {}{more}.",
            platform_text::session_id_source(&self.config.platform),
            listed.join("; ")
        )
    }

    fn describe_active(&self, root: &Path, wf: &WorkflowSession) -> Value {
        let completed: Vec<&String> =
            wf.step_progress.values().filter(|p| p.completed_at.is_some()).map(|p| &p.step_id).collect();
        let mut entry = serde_json::json!({
            "session_id": wf.session_id,
            "job_name": wf.job_name,
            "workflow_name": wf.workflow_name,
            "goal": wf.goal,
            "current_step_id": wf.current_step_id,
            "completed_steps": completed,
            "common_job_info": Value::Null,
            "current_step_instructions": Value::Null,
        });
        let store = SessionStore::new(root, &self.config.platform);
        if let Ok(job) = self.find_job(root, &store, Some(&wf.session_id), &wf.job_name)
            && let Some(workflow) = job.workflows.get(&wf.workflow_name)
            && let Some(index) = workflow.step_index(&wf.current_step_id)
        {
            entry["common_job_info"] = workflow.common_job_info.clone().map_or(Value::Null, Value::from);
            entry["current_step_instructions"] = workflow.steps[index].instructions.clone().map_or(Value::Null, Value::from);
            entry["step_number"] = Value::from(index + 1);
            entry["total_steps"] = Value::from(workflow.steps.len());
        }
        entry
    }
}

/// How many sessions [`Deepwork::missing_session`] names.
const MAX_LISTED_SESSIONS: usize = 5;

/// The active workflows on the main stacks of the sessions under `root` (of `platform` only, when given), newest
/// first.
fn active_workflows(root: &Path, platform: Option<&str>) -> Vec<WorkflowSession> {
    let sessions = root.join(".deepwork").join("tmp").join("sessions");
    let mut found: Vec<WorkflowSession> = Vec::new();
    let platforms = std::fs::read_dir(&sessions).into_iter().flatten().filter_map(|e| e.ok());
    for dir in platforms.filter(|dir| platform.is_none_or(|p| dir.file_name() == p)) {
        let dirs = std::fs::read_dir(dir.path()).into_iter().flatten().filter_map(|e| e.ok());
        for dir in dirs {
            if !dir.file_name().to_string_lossy().starts_with("session-") {
                continue;
            }
            let Ok(file) = read_stack(&dir.path().join("state.json")) else { continue };
            found.extend(file.workflow_stack.into_iter().filter(|w| w.status == "active"));
        }
    }
    found.sort_by(|a, b| b.started_at.cmp(&a.started_at));
    found
}
