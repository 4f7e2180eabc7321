//! The active workflows of every session in a project: what an agent needs to resume after its context was
//! compacted, and what the web UI lists.

use std::path::Path;

use serde_json::Value;

use crate::session::WorkflowSession;
use crate::session_store::{SessionStore, read_stack};

use super::Deepwork;

impl Deepwork {
    /// Active workflows of every session under `root` (all platforms, main stacks), newest first: what an agent needs
    /// to resume after its context was compacted.
    pub fn active_sessions(&self, root: &Path) -> Vec<Value> {
        let sessions = root.join(".deepwork").join("tmp").join("sessions");
        let mut found: Vec<(String, Value)> = Vec::new();
        let platforms = std::fs::read_dir(&sessions).into_iter().flatten().filter_map(|e| e.ok());
        for platform in platforms {
            let dirs = std::fs::read_dir(platform.path()).into_iter().flatten().filter_map(|e| e.ok());
            for dir in dirs {
                if !dir.file_name().to_string_lossy().starts_with("session-") {
                    continue;
                }
                let Ok(file) = read_stack(&dir.path().join("state.json")) else { continue };
                for wf in file.workflow_stack.iter().filter(|w| w.status == "active") {
                    found.push((wf.started_at.clone(), self.describe_active(root, wf)));
                }
            }
        }
        found.sort_by(|a, b| b.0.cmp(&a.0));
        found.into_iter().map(|(_, v)| v).collect()
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
