//! Driving runs. Every change is a step: one write transaction that loads the run, applies the event with
//! [`engine::apply`], stores the new state with a version compare-and-swap and commits ([`Runs::step`]). The effects a
//! step asks for are then carried out — scripts and child runs by an [`EffectRunner`], parents told their child
//! finished, scripts of a cancelled node killed — and their results applied as further steps, until the run pauses,
//! finishes, or waits on a human ([`Runs::drive_with`]). Cancelling a tree is one transaction over all its runs.

use std::collections::VecDeque;
use std::future::Future;

use cairn_store::changes::Change;
use cairn_store::runs::{self as rows, Connection, RunRow};
use serde_json::json;

use super::convert::{node_to_row, run_from_row, run_to_row};
use super::processes::kill_later;
use super::tree::Tree;
use super::Runs;
use crate::clock::{self, now_ms};
use crate::engine::{
    self, ChildJob, Effect, Event, ModelJob, Outcome, Rejection, Run, RunStatus, ScriptJob, ScriptResult,
};
use crate::error::Error;

/// What carries out the effects of a step that reach outside the run: production's `Executor` (`effects.rs`), or
/// `test_workflow`'s mocks standing in for it (`test_runner.rs`).
pub(super) trait EffectRunner: Sync {
    /// Runs script `job` of `run`: its result.
    fn run_script(&self, runs: &Runs, run: &Run, job: &ScriptJob) -> impl Future<Output = Result<ScriptResult, Error>> + Send;

    /// Starts the child run of subworkflow `job` of `run`: the next event, and the run it is for (the child's
    /// `Start`, or the parent's `ChildFinished` when there is no child to run).
    fn start_child(&self, runs: &Runs, run: &Run, job: &ChildJob) -> impl Future<Output = Result<(String, Event), Error>> + Send;

    /// Makes the model calls of `job` for `run`: the event that applies their outcome to `run`, or `None` when there
    /// is none to apply here (the run stopped meanwhile, or the calls go on in the background).
    /// `written` is `run`'s row as the step that asked for the calls wrote it.
    fn call_models(
        &self,
        runs: &Runs,
        run: &Run,
        written: &RunRow,
        job: &ModelJob,
    ) -> impl Future<Output = Option<Event>> + Send;
}

impl Runs {
    /// Applies `event` to run `run_id` and carries out the effects with `effects` until nothing is left to do, keeping
    /// `tree` up to date. Returns the notice of the first event (an answer recorded but not accepted); a rejected
    /// first event is the error.
    pub(super) async fn drive_with(
        &self,
        run_id: &str,
        event: Event,
        effects: &impl EffectRunner,
        tree: &mut Tree,
    ) -> Result<Option<Rejection>, Error> {
        let mut queue = VecDeque::from([(run_id.to_owned(), event)]);
        let mut first = true;
        let mut notice = None;
        while let Some((id, event)) = queue.pop_front() {
            let (outcome, written) = match self.step(&id, event).await {
                Ok(stepped) => stepped,
                Err(error) if first => return Err(error),
                // A late result for a run that moved on (e.g. a script finishing after a cancel) changes nothing.
                Err(error) if !error.is_internal() => {
                    tree.mark_stale();
                    continue;
                }
                Err(error) => return Err(error),
            };
            if first {
                notice = outcome.notice.clone();
                first = false;
            }
            for effect in &outcome.effects {
                match effect {
                    Effect::RunScript(job) => {
                        let result = effects.run_script(self, &outcome.run, job).await?;
                        let node_run_id = job.node_run_id.clone();
                        queue.push_back((id.clone(), Event::ScriptFinished { node_run_id, result }));
                    }
                    Effect::StartChild(job) => queue.push_back(effects.start_child(self, &outcome.run, job).await?),
                    Effect::NotifyParent { parent_run_id } => queue.push_back((
                        parent_run_id.clone(),
                        Event::ChildFinished {
                            child_run_id: outcome.run.id.clone(),
                            status: outcome.run.status,
                            output: outcome.run.output.clone(),
                            error: outcome.run.error.clone(),
                            error_code: outcome.run.error_code.clone(),
                        },
                    )),
                    Effect::Kill { pid } => kill_later(*pid, &outcome.run.id),
                    Effect::CallModels(job) => {
                        if let Some(event) = effects.call_models(self, &outcome.run, &written, job).await {
                            queue.push_back((id.clone(), event));
                        }
                    }
                }
            }
            tree.wrote(written);
        }
        Ok(notice)
    }

    /// One transaction: load, apply, store with the version check, commit. The engine's outcome and the run's row as
    /// written.
    pub(super) async fn step(&self, run_id: &str, event: Event) -> Result<(Outcome, RunRow), Error> {
        let mut tx = rows::begin(&self.inner.store).await?;
        let row = rows::lock_run(&mut tx, run_id).await?.ok_or_else(Error::run_not_found)?;
        if event == Event::RunnerLost && !self.is_lost(&row) {
            // Another call found the runner lost first, and the run has a runner again (a server run calling anew).
            rows::rollback(tx).await?;
            return Err(Error::refused("stale_step", "the run has a runner again"));
        }
        let open = rows::open_node_run(&mut tx, run_id).await?;
        let run = run_from_row(&row, open.as_ref(), &self.inner.snapshots)?;
        let outcome = match engine::apply(&run, event, &mut SystemEnv) {
            Ok(outcome) => outcome,
            Err(rejection) => {
                rows::rollback(tx).await?;
                return Err(rejection.into());
            }
        };
        let written = self.persist(&mut tx, &row, &outcome).await?;
        rows::commit(tx).await?;
        self.inner.store.changes().committed(Change::Run(row.root_run_id));
        Ok((outcome, written))
    }

    /// Stores `outcome` over `base` inside `tx`: the run (compare-and-swap on its version), its timer, the
    /// notifications its event sends, its node runs and an event row. Returns the run's row as written.
    async fn persist(&self, tx: &mut Connection, base: &RunRow, outcome: &Outcome) -> Result<RunRow, Error> {
        let now = now_ms();
        let mut row = run_to_row(&outcome.run, base, now);
        row.version = base.version + 1;
        if outcome.run.status == RunStatus::Running {
            self.hold(&mut row, now);
        } else if row.kind == "test" {
            // The orphan sweep tells a live test from a crashed one by its process.
            row.owner_pid = Some(i64::from(self.inner.pid));
        }
        if !rows::update_run(tx, &row, base.version).await? {
            return Err(Error::refused(
                "stale_step",
                "the run changed while this answer was being applied; call get_run_status and answer the current step",
            ));
        }
        self.set_timer(tx, base, &outcome.run).await?;
        self.queue_notifications(tx, base, &outcome.run).await?;
        for record in &outcome.records {
            rows::upsert_node_run(tx, &node_to_row(record, &row.id)).await?;
        }
        if let Some(open) = &outcome.run.open {
            rows::upsert_node_run(tx, &node_to_row(open, &row.id)).await?;
        }
        let data = json!({ "status": row.status, "node": row.current_node_id }).to_string();
        rows::append_event(tx, &row.id, row.version, now, "state", &data).await?;
        Ok(row)
    }

    /// Cancels every non-terminal run of `tree` in one transaction (the tree is read again under its lock), then kills
    /// their scripts. A terminal root is an error (`terminal`).
    pub(super) async fn cancel_tree(&self, tree: &mut Tree, reason: Option<String>) -> Result<(), Error> {
        let root_id = tree.root_id().to_owned();
        let mut tx = rows::begin(&self.inner.store).await?;
        let locked = rows::lock_tree(&mut tx, &root_id).await?;
        let root = locked.iter().find(|r| r.id == root_id).ok_or_else(Error::run_not_found)?;
        if let Some(status) = RunStatus::from_name(&root.status).filter(|s| s.is_terminal()) {
            rows::rollback(tx).await?;
            return Err(Error::refused("terminal", format!("Run is already {}.", status.as_str())));
        }
        let mut kills = Vec::new();
        let mut written = Vec::new();
        for row in locked.iter().filter(|r| RunStatus::from_name(&r.status).is_some_and(|s| !s.is_terminal())) {
            let open = rows::open_node_run(&mut tx, &row.id).await?;
            let run = run_from_row(row, open.as_ref(), &self.inner.snapshots)?;
            let reason =
                reason.clone().or_else(|| (row.id != root_id).then(|| "Cancelled with its parent run".to_owned()));
            let outcome = engine::apply(&run, Event::Cancel { reason }, &mut SystemEnv)?;
            kills.extend(outcome.effects.iter().filter_map(|e| match e {
                Effect::Kill { pid } => Some((*pid, row.id.clone())),
                _ => None,
            }));
            written.push(self.persist(&mut tx, row, &outcome).await?);
        }
        rows::commit(tx).await?;
        self.inner.store.changes().committed(Change::Run(root_id.clone()));
        self.abandon_calls(&root_id);
        tree.locked(locked);
        for row in written {
            tree.wrote(row);
        }
        for (pid, run_id) in kills {
            kill_later(pid, &run_id);
        }
        Ok(())
    }
}

tokio::task_local! {
    /// When the engine work of the current task must stop, in epoch milliseconds: set by `test_workflow` around
    /// its run, so a timeout interrupts conditions and the drive between nodes, not only awaits.
    pub(crate) static DEADLINE: i64;
}

/// The real clock and id source the engine runs on here, with the task's [`DEADLINE`].
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct SystemEnv;

impl engine::Env for SystemEnv {
    fn now(&self) -> i64 {
        now_ms()
    }

    fn new_id(&mut self) -> String {
        clock::new_id()
    }

    fn deadline(&self) -> Option<i64> {
        DEADLINE.try_with(|at| *at).ok()
    }
}
