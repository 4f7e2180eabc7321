//! The effects of a step that reach outside the run, as every run but a test carries them out ([`Executor`], the
//! production [`EffectRunner`]): a script runs as its own process group ([`script_runner`]) under a lease this
//! process renews, with its retries, and only in a run whose starter may run scripts, its output followed live
//! ([`live_output`](super::live_output): in this process at once, in the store once a second); a subworkflow node's
//! child run is created from the workflow it names, then started; the model calls of a server-executed run's AI step are made
//! ([`calls`](super::calls)) — in a task of their own when the drive is a request's (`background`), which then goes
//! on driving the run after the calls, so the request returns while they are made.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use cairn_store::runs::{self as rows, RunRow};
use serde_json::Value;

use super::drive::EffectRunner;
use super::live_output::Flusher;
use super::prepare::{Starter, run_scope};
use super::processes::kill_later;
use super::script_runner;
use super::{Runs, lease};
use super::tree::Tree;
use crate::engine::{ChildJob, Event, ModelJob, Run, RunStatus, ScriptJob, ScriptResult};
use crate::error::Error;
use crate::source::Source;

/// The real effects: scripts run, child runs created, models called.
pub(super) struct Executor {
    /// Whether model calls are made in a task of their own, which drives the run on afterwards.
    pub(super) background: bool,
}

impl EffectRunner for Executor {
    async fn run_script(&self, runs: &Runs, run: &Run, job: &ScriptJob) -> Result<ScriptResult, Error> {
        if !run.exec_allowed {
            return Ok(ScriptResult {
                spawn_error: Some(
                    "this run was started by a principal without the roscoe:exec scope, so it runs no `script` node; \
                     start it with a token that has roscoe:exec"
                        .into(),
                ),
                attempts: 1,
                ..ScriptResult::default()
            });
        }
        Ok(runs.run_script(run, job).await)
    }

    async fn start_child(&self, runs: &Runs, run: &Run, job: &ChildJob) -> Result<(String, Event), Error> {
        match runs.create_child(run, job).await {
            Ok(()) => Ok((job.child_run_id.clone(), Event::Start)),
            Err(error) if !error.is_internal() => Ok((
                run.id.clone(),
                Event::ChildFinished {
                    child_run_id: job.child_run_id.clone(),
                    status: RunStatus::Failed,
                    output: None,
                    error: Some(error.to_string()),
                    error_code: Some(error.as_code().to_owned()),
                },
            )),
            Err(error) => Err(error),
        }
    }

    async fn call_models(&self, runs: &Runs, run: &Run, written: &RunRow, job: &ModelJob) -> Option<Event> {
        if !self.background {
            return runs.call_models(run, Some(written), job).await;
        }
        // Whether the calls can be made at all (a provider, the budget) is settled in this call.
        let ready = match runs.ready_calls(run, Some(written), job).await {
            Ok(ready) => ready,
            Err(event) => return Some(event),
        };
        let (runs, run, job) = (runs.clone(), run.clone(), job.clone());
        tokio::spawn(async move {
            if let Some(event) = runs.make_calls(&run, &job, ready).await {
                drive_on(runs, run, event).await;
            }
        });
        None
    }
}

/// Drives `run` on from `event` (the outcome of model calls made in the background), model calls included.
fn drive_on(runs: Runs, run: Run, event: Event) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(async move {
        let mut tree = Tree::unread(&run.root_run_id);
        if let Err(error) = runs.drive_with(&run.id, event, &Executor { background: false }, &mut tree).await
            && error.is_internal()
        {
            tracing::warn!("run {}: driving on after model calls failed: {error}", run.id);
        }
    })
}

impl Runs {
    /// Runs a script with its retries, recording each attempt's process group so any process can kill it on cancel.
    async fn run_script(&self, run: &Run, job: &ScriptJob) -> ScriptResult {
        let cwd = self.script_cwd(run, job);
        // The group of the attempt running now (0 between attempts), for the lease renewal to stop.
        let group = Arc::new(AtomicU32::new(0));
        let (lost_group, lost_run) = (group.clone(), run.id.clone());
        let on_lost = move || kill_later(lost_group.load(Ordering::Relaxed), &lost_run);
        let renewal = lease::renew(self.inner.store.clone(), run.id.clone(), i64::from(self.inner.pid), on_lost);
        let mut attempts = 0;
        let mut wait = job.retry.backoff_ms as f64;
        let result = loop {
            attempts += 1;
            let (sender, receiver) = tokio::sync::oneshot::channel();
            let current = group.clone();
            let live = self.inner.live.start(&run.root_run_id, &run.id, &job.node_run_id, &job.node_id);
            let flusher = Flusher::start(self.inner.store.clone(), live.clone());
            let runner = script_runner::run_once(job, &cwd, self.home(), &live, move |pid| {
                current.store(pid, Ordering::Relaxed);
                let _ = sender.send(pid);
            });
            let record = async {
                if let Ok(pid) = receiver.await {
                    let started = Event::ScriptStarted { node_run_id: job.node_run_id.clone(), pid };
                    if self.step(&run.id, started).await.is_err() {
                        // Cancelled before the process was recorded: stop it now.
                        kill_later(pid, &run.id);
                    }
                }
            };
            let (mut result, ()) = tokio::join!(runner, record);
            flusher.stop().await;
            self.inner.live.end(&live);
            result.attempts = attempts;
            if result.success || attempts >= job.retry.max_attempts || !self.still_running(run, job).await {
                break result;
            }
            tokio::time::sleep(Duration::from_millis(wait as u64)).await;
            wait *= job.retry.backoff_rate;
        };
        renewal.abort();
        result
    }

    async fn still_running(&self, run: &Run, job: &ScriptJob) -> bool {
        let Ok(mut conn) = self.inner.store.read().await else { return false };
        matches!(
            rows::open_node_run(&mut conn, &run.id).await,
            Ok(Some(open)) if open.id == job.node_run_id && open.status == "running"
        )
    }

    fn script_cwd(&self, run: &Run, job: &ScriptJob) -> PathBuf {
        let base = match &run.project_root {
            Some(root) => PathBuf::from(root),
            None if Path::new(&run.workflow_dir).is_dir() => PathBuf::from(&run.workflow_dir),
            None => std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| self.home().to_owned()),
        };
        match &job.cwd {
            Some(cwd) => base.join(cwd),
            None => base,
        }
    }

    /// Creates the child run of a subworkflow node (not yet started).
    async fn create_child(&self, parent: &Run, job: &ChildJob) -> Result<(), Error> {
        let scope = run_scope(parent);
        let source = match job.source.as_deref() {
            Some(s) => Some(s.parse::<Source>()?),
            None => None,
        };
        let prepared = self.prepare(&scope, &job.workflow, source).map_err(|e| {
            if e.as_code() == "not_found" {
                Error::refused("workflow_not_found", format!("subworkflow '{}' was not found", job.workflow))
            } else {
                e
            }
        })?;
        let input = Value::Object(job.inputs.clone());
        let starter =
            Starter { origin: parent.source.clone(), name: parent.started_by.clone(), exec_allowed: parent.exec_allowed };
        let mut row = self.new_run_row(&scope, &prepared, Some(&input), &starter, &parent.kind, Some(parent))?;
        row.id = job.child_run_id.clone();
        row.parent_node_run_id = Some(job.node_run_id.clone());
        row.execution = parent.execution.as_str().to_owned();
        self.insert(&row).await
    }
}
