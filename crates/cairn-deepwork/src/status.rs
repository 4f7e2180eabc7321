//! Status files: a stable, read-only view of jobs and sessions for other tools (editors, dashboards, hooks).
//!
//! Under `<root>/.deepwork/tmp/status/v1/`: `job_manifest.yml` lists every job with its workflows and steps, and
//! `sessions/<session id>.yml` shows a session's workflows (main stack first, then each sub-agent; on each, active
//! workflows in the order they were started, then completed ones) with their step history. They are written after every state change, failures only logged: they never make a tool call fail.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::job::JobDefinition;
use crate::session::{WorkflowSession, now};
use crate::session_store::{Durability, SessionStore, write_atomic};

/// Writes the status files of one project.
#[derive(Debug, Clone)]
pub struct StatusWriter {
    dir: PathBuf,
}

impl StatusWriter {
    /// The writer for the project at `root`.
    pub fn new(root: &Path) -> Self {
        StatusWriter { dir: root.join(".deepwork").join("tmp").join("status").join("v1") }
    }

    /// Where the job manifest lives.
    pub fn manifest_path(&self) -> PathBuf {
        self.dir.join("job_manifest.yml")
    }

    /// Rewrites `job_manifest.yml` (jobs and workflows sorted by name).
    pub fn write_manifest(&self, jobs: &[Arc<JobDefinition>]) {
        let mut jobs: Vec<&Arc<JobDefinition>> = jobs.iter().collect();
        jobs.sort_by(|a, b| a.name.cmp(&b.name));
        let jobs: Vec<Value> = jobs
            .into_iter()
            .map(|job| {
                let mut workflows: Vec<_> = job.workflows.values().collect();
                workflows.sort_by(|a, b| a.name.cmp(&b.name));
                json!({
                    "name": job.name,
                    "display_name": display_name(&job.name),
                    "summary": job.summary,
                    "workflows": workflows.iter().map(|wf| json!({
                        "name": wf.name,
                        "display_name": display_name(&wf.name),
                        "summary": wf.summary,
                        "steps": step_names(&wf.steps.iter().map(|s| s.name.as_str()).collect::<Vec<_>>()),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        self.write_yaml(&self.manifest_path(), &json!({ "jobs": jobs }));
    }

    /// Rewrites `sessions/<session_id>.yml`. `lookup` finds a job by name (None when it no longer loads).
    pub fn write_session(
        &self,
        store: &SessionStore,
        session_id: &str,
        lookup: &dyn Fn(&str) -> Option<Arc<JobDefinition>>,
    ) {
        let mut workflows = Vec::new();
        let mut active_workflow = Value::Null;
        let agents = store.agent_ids(session_id);
        let stacks = std::iter::once(None).chain(agents.iter().map(|a| Some(a.as_str())));
        for agent in stacks {
            let Ok(file) = store.read(session_id, agent) else { continue };
            if agent.is_none() {
                active_workflow = file.workflow_stack.last().map_or(Value::Null, |w| json!(w.workflow_instance_id));
            }
            // Active workflows in the order they were started (outer before nested), then the completed ones.
            for wf in file.workflow_stack.iter().chain(file.completed_workflows.iter()) {
                workflows.push(workflow_status(wf, agent, lookup));
            }
        }
        let status = json!({
            "session_id": session_id,
            "last_updated_at": now(),
            "active_workflow": active_workflow,
            "workflows": workflows,
        });
        self.write_yaml(&self.dir.join("sessions").join(format!("{session_id}.yml")), &status);
    }

    fn write_yaml(&self, path: &Path, value: &Value) {
        let written = serde_saphyr::to_string(value)
            .map_err(|e| e.to_string())
            .and_then(|text| write_atomic(path, text.as_bytes(), Durability::Replaced).map_err(|e| e.to_string()));
        if let Err(err) = written {
            tracing::warn!("could not write status file {}: {err}", path.display());
        }
    }
}

fn workflow_status(
    wf: &WorkflowSession,
    agent: Option<&str>,
    lookup: &dyn Fn(&str) -> Option<Arc<JobDefinition>>,
) -> Value {
    let job = lookup(&wf.job_name);
    let definition = job.as_ref().and_then(|j| j.workflows.get(&wf.workflow_name));
    let mut workflow = json!({
        "name": wf.workflow_name,
        "display_name": display_name(&wf.workflow_name),
        "summary": definition.map_or("", |d| d.summary.as_str()),
    });
    if let Some(definition) = definition {
        workflow["steps"] = step_names(&definition.steps.iter().map(|s| s.name.as_str()).collect::<Vec<_>>());
    }
    json!({
        "workflow_instance_id": wf.workflow_instance_id,
        "job_name": wf.job_name,
        "status": wf.status,
        "workflow": workflow,
        "agent_id": agent,
        "steps": wf.step_history.iter().map(|h| json!({
            "step_name": h.step_id,
            "started_at": h.started_at,
            "finished_at": h.finished_at,
            "sub_workflow_instance_ids": h.sub_workflow_instance_ids,
        })).collect::<Vec<_>>(),
    })
}

fn step_names(names: &[&str]) -> Value {
    names.iter().map(|n| json!({"name": n, "display_name": display_name(n)})).collect()
}

/// `full_analysis` → `Full Analysis`: separators become spaces, then each word is capitalised as Python's
/// `str.title()` does (a letter after a non-letter starts a word).
pub fn display_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut previous_is_letter = false;
    for c in name.chars().map(|c| if c == '_' || c == '-' { ' ' } else { c }) {
        if c.is_alphabetic() {
            if previous_is_letter {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
            }
            previous_is_letter = true;
        } else {
            out.push(c);
            previous_is_letter = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_follow_title_case() {
        assert_eq!(display_name("full_analysis"), "Full Analysis");
        assert_eq!(display_name("deepplan"), "Deepplan");
        assert_eq!(display_name("step2go-now"), "Step2Go Now");
    }
}
