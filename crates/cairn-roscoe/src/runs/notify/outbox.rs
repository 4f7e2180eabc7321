//! Queueing notifications: inside the transaction of the step that moved a run ([`Runs::queue_notifications`],
//! called by `persist`), the event the step caused, if any, becomes one delivery row per target that wants it, with
//! the exact body that will be POSTed. A run moves and its deliveries exist together or not at all. With no
//! `notify:` targets, or for a test run, this costs no statement.
//!
//! Which steps notify: a run of any depth that starts waiting at a human step or on its budget (a person must act
//! in the tree), and a top-level run that completes or fails (a child's end is its parent's business, and the tree
//! tells its own end).

use cairn_store::runs::{self as rows, Connection, NewNotification, RunRow};
use serde_json::{Value, json};

use super::targets::{Format, NotifyEvent, NotifyTarget};
use crate::clock::{self, now_ms};
use crate::engine::{PendingStep, Run, RunStatus};
use crate::error::Error;
use crate::runs::{DEFAULT_BASE_URL, Runs};

impl Runs {
    /// Inside `tx`, which writes `run` over `base`: queues the deliveries of the event this step causes.
    pub(in crate::runs) async fn queue_notifications(
        &self,
        tx: &mut Connection,
        base: &RunRow,
        run: &Run,
    ) -> Result<(), Error> {
        if self.inner.notify.is_empty() || base.kind == "test" {
            return Ok(());
        }
        let Some(event) = event_of(base, run) else { return Ok(()) };
        // Collected before the first await: a filtering closure held across it is not `Send` to the compiler.
        let targets: Vec<&NotifyTarget> =
            self.inner.notify.iter().filter(|t| t.wants(event, &base.workflow_id)).collect();
        if targets.is_empty() {
            return Ok(());
        }
        let at = now_ms();
        let url = self.run_url(&run.id, &run.project_id);
        for target in targets {
            let id = clock::new_id();
            let facts = facts(&id, event, base, run, &url, at);
            let body = match target.format {
                Format::Json => facts.to_string(),
                Format::Slack => json!({ "text": slack_text(&facts, &base.workflow_name) }).to_string(),
            };
            let delivery = NewNotification {
                id,
                run_id: run.id.clone(),
                root_run_id: run.root_run_id.clone(),
                event: event.as_str().to_owned(),
                url: target.url.clone(),
                secret_env: target.secret_env.clone(),
                body,
                created_at: at,
            };
            rows::insert_notification(tx, &delivery).await?;
        }
        Ok(())
    }

    /// The run's deep link, as its start answers it (`/open/runs/<id>?project=`).
    fn run_url(&self, run_id: &str, project_id: &str) -> String {
        let base = self.live_server().map_or_else(|| DEFAULT_BASE_URL.to_owned(), |(base, _)| base);
        let project = if project_id.is_empty() { "global" } else { project_id };
        format!("{base}/open/runs/{run_id}?project={project}")
    }
}

/// The event `run`, written over `base`, enters in this step, if any.
fn event_of(base: &RunRow, run: &Run) -> Option<NotifyEvent> {
    match run.status {
        RunStatus::Paused => {
            let pending = run.pending.as_ref()?;
            let before = base
                .pending_step
                .as_deref()
                .filter(|_| base.status == "paused")
                .and_then(|text| serde_json::from_str::<PendingStep>(text).ok());
            // The same visit of the same step, still waiting (a notice, a budget raised and held again…).
            let same = before.as_ref().filter(|b| {
                b.run_id == pending.run_id && b.node_id == pending.node_id && b.iteration == pending.iteration
            });
            if pending.budget_exceeded.is_some() {
                return same.is_none_or(|b| b.budget_exceeded.is_none()).then_some(NotifyEvent::BudgetExceeded);
            }
            (pending.node_type == "human" && same.is_none()).then_some(NotifyEvent::PausedForHuman)
        }
        RunStatus::Completed | RunStatus::Failed if run.parent_run_id.is_none() => {
            let ended = base.status != run.status.as_str();
            let event = if run.status == RunStatus::Completed { NotifyEvent::Completed } else { NotifyEvent::Failed };
            ended.then_some(event)
        }
        _ => None,
    }
}

/// The JSON body of delivery `id`: what happened to which run, and where to see it.
fn facts(id: &str, event: NotifyEvent, base: &RunRow, run: &Run, url: &str, at: i64) -> Value {
    let mut facts = json!({
        "id": id,
        "event": event.as_str(),
        "runId": run.id,
        "rootRunId": run.root_run_id,
        "workflowId": base.workflow_id,
        "projectId": run.project_id,
        "status": run.status.as_str(),
        "url": url,
        "at": clock::rfc3339(at),
    });
    let pending = run.pending.as_ref().filter(|_| run.status == RunStatus::Paused);
    if let Some(node) = pending.map(|p| &p.node_id).or(run.current_node.as_ref()) {
        facts["nodeId"] = json!(node);
    }
    match (event, pending) {
        (NotifyEvent::PausedForHuman, Some(step)) => {
            facts["prompt"] = json!(step.prompt);
            facts["choices"] = json!(step.valid_transitions);
        }
        (NotifyEvent::BudgetExceeded, Some(step)) => {
            facts["error"] = json!(step.budget_exceeded.as_ref().map(|hold| &hold.message));
        }
        _ => {}
    }
    if event == NotifyEvent::Failed {
        facts["error"] = json!(run.error);
        if let Some(code) = &run.error_code {
            facts["errorCode"] = json!(code);
        }
    }
    facts
}

/// The one line a chat shows for `facts`, with the run's link.
fn slack_text(facts: &Value, workflow_name: &str) -> String {
    let s = |key: &str| facts[key].as_str().unwrap_or_default();
    let what = match s("event") {
        "run.paused_for_human" => {
            let choices: Vec<&str> =
                facts["choices"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            format!("waits for a person at {}: {} ({})", s("nodeId"), s("prompt"), choices.join(", "))
        }
        "run.completed" => "completed".to_owned(),
        "run.failed" => format!("failed at {}: {}", s("nodeId"), s("error")),
        _ => format!("paused on its budget at {}: {}", s("nodeId"), s("error")),
    };
    format!("roscoe: run {} of {workflow_name} {what} {}", s("runId"), s("url"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_line_names_the_run_what_happened_and_its_link() {
        let facts = json!({
            "event": "run.paused_for_human", "runId": "r1", "nodeId": "ask", "prompt": "Ship it?",
            "choices": ["ship", "stop"], "url": "http://127.0.0.1:7777/open/runs/r1?project=global",
        });
        assert_eq!(
            slack_text(&facts, "release"),
            "roscoe: run r1 of release waits for a person at ask: Ship it? (ship, stop) \
             http://127.0.0.1:7777/open/runs/r1?project=global"
        );
        let failed = json!({ "event": "run.failed", "runId": "r2", "nodeId": "build", "error": "exit 2", "url": "u" });
        assert_eq!(slack_text(&failed, "ci"), "roscoe: run r2 of ci failed at build: exit 2 u");
    }
}
