//! Schedules: the runs a workflow's `schedule` (cron) and `every` triggers start, on every `cairn serve` and
//! `roscoe mcp` of a database ([`Runs::keep_schedules`]), and what `roscoe schedules` and the web UI show and change.
//!
//! Every [`LOOK_EVERY`] a scheduler reads the workflows of the global source and of the repo source of every project
//! the database knows (and those `cairn serve` serves); unchanged files cost no parse (the definition cache). Each
//! timed trigger has a row in `workflow_schedules` (cairn-store `schedules`), made from the moment it is first seen:
//! slots before that start nothing. When a slot falls due the scheduler claims it by a compare-and-set on the row's
//! `last_slot`, then starts the run: of several servers one claim wins, so a slot starts one run. The claim comes
//! before the run is created, so a server that dies between the two loses that slot's run: a slot starts at most
//! once, never twice.
//!
//! When every server was down through several slots, the first look afterwards starts one run, for the latest slot,
//! and records how many it passed over (the row's `last_skipped`, the run's `schedule` action). A paused schedule
//! starts nothing; resuming it starts from that moment.
//!
//! The run's actor is the schedule's own: principal `schedule:<workflow id>`, via `schedule`. Its AI steps run on the
//! server. It may run a global workflow's scripts (the home is the operator's, and the workflow tools save a workflow
//! with scripts only for a caller holding `roscoe:exec`); a repo workflow's file is the project's, which others
//! change, so a scheduled start of one with `script` nodes is refused (and logged) unless the file is the text an
//! exec holder approved (`trigger_exec.rs`).

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::time::Duration;

use cairn_store::schedules::{self as rows, ScheduleRow, SlotClaim};
use serde::Serialize;
use serde_json::json;

use super::{Runs, StartOptions, StartRequest, run_subject};
use crate::actor::Actor;
use crate::clock::{now_ms, rfc3339};
use crate::definition::Trigger;
use crate::engine::Execution;
use crate::error::Error;
use crate::scope::{Scope, project_id};
use crate::service::crud::{TriggerState, WorkflowDetail, WorkflowSummary};
use crate::source::Source;
use crate::sources::Sources;

/// How often the schedules are looked at: a slot starts within this of its time.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// How many fire times [`ScheduleView::next`] lists.
const NEXT_SHOWN: usize = 3;

/// At most this many passed slots are counted for a catch-up (a minutely schedule down for two years).
const COUNT_AT_MOST: i64 = 1_000_000;

/// One timed trigger of a workflow, as `roscoe schedules list`, the web UI and `list_workflows` show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleView {
    /// The workflow.
    pub workflow_id: String,
    /// Where its file is.
    pub source: Source,
    /// `schedule` or `every`.
    pub kind: &'static str,
    /// The cron expression or the interval.
    pub expression: String,
    /// A schedule's time zone (`UTC` when it names none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// The next fire times (RFC 3339, UTC).
    pub next: Vec<String>,
    /// Whether it is paused (its next fire times start nothing until it is resumed).
    pub paused: bool,
    /// The run its last slot started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_run_id: Option<String>,
    /// When its last run's slot was (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_slot_at: Option<String>,
    /// How many slots the last catch-up passed over (the servers were down).
    pub skipped_slots: i64,
}

/// The key of a timed trigger's row: its kind and expression (and zone), so an edited trigger is a new schedule.
fn trigger_key(trigger: &Trigger) -> String {
    match trigger {
        Trigger::Schedule { timezone: Some(zone), .. } => format!("schedule {} {zone}", trigger.expression()),
        _ => format!("{} {}", trigger.kind(), trigger.expression()),
    }
}

/// A workflow with timed triggers, found in one scope.
struct Scheduled {
    id: String,
    source: Source,
    triggers: Vec<Trigger>,
}

impl Runs {
    /// Looks at the schedules of this database in the background for as long as the process runs (see the module
    /// doc); `served` are project folders to look in besides the projects the database knows (`cairn serve
    /// --project`).
    pub fn keep_schedules(&self, served: Vec<PathBuf>) -> tokio::task::JoinHandle<()> {
        let served = std::sync::Arc::new(served);
        self.every(LOOK_EVERY, "look at the workflow schedules", move |runs| {
            let served = served.clone();
            async move { runs.start_due_slots(&served).await }
        })
    }

    /// One look at every schedule: rows for the newly seen, a run for each slot due. Returns how many runs started.
    pub async fn start_due_slots(&self, served: &[PathBuf]) -> Result<usize, Error> {
        let mut started = 0;
        for scope in self.scheduled_scopes(served).await? {
            let found = self.scheduled(&scope);
            if found.is_empty() {
                continue;
            }
            let mut conn = self.inner.store.read().await?;
            let known = rows::schedules(&mut conn, scope.project_id()).await?;
            drop(conn);
            for workflow in &found {
                for trigger in &workflow.triggers {
                    if self.tick(&scope, workflow, trigger, &known).await? {
                        started += 1;
                    }
                }
            }
        }
        Ok(started)
    }

    /// The global scope and the scope of every project the database knows or `served` names, once each.
    async fn scheduled_scopes(&self, served: &[PathBuf]) -> Result<Vec<Scope>, Error> {
        let mut conn = self.inner.store.read().await?;
        let known = rows::known_projects(&mut conn).await?;
        drop(conn);
        let mut roots: Vec<PathBuf> = known.into_iter().map(|(_, root)| PathBuf::from(root)).collect();
        roots.extend(served.iter().cloned());
        roots.sort();
        roots.dedup();
        let projects = roots.into_iter().filter(|root| root.is_dir()).map(|root| Scope::Project {
            cwd: root.clone(),
            project_id: project_id(&root),
            root,
        });
        Ok(std::iter::once(Scope::Global).chain(projects).collect())
    }

    /// The workflows of `scope`'s own source (repo for a project, global for global) with timed triggers, valid ones
    /// only (a file that does not validate schedules nothing until it is fixed).
    fn scheduled(&self, scope: &Scope) -> Vec<Scheduled> {
        let own = if scope.root().is_some() { Source::Repo } else { Source::Global };
        let Ok(files) = Sources::new(self.home(), scope).list() else { return Vec::new() };
        files
            .into_iter()
            .filter(|file| file.source == own)
            .filter_map(|file| {
                let text = file.read().ok()?;
                let (workflow, _) = self.inner.definitions.validated(&file.id, &text).ok()?;
                let mut triggers: Vec<Trigger> = workflow.triggers.iter().filter(|t| t.is_timed()).cloned().collect();
                triggers.dedup_by_key(|t| trigger_key(t));
                (!triggers.is_empty()).then(|| Scheduled { id: file.id, source: own, triggers })
            })
            .collect()
    }

    /// Handles one timed trigger: makes its row when it is new, else starts the run of its due slot, if any (and if
    /// this server's claim wins). Returns whether it started one.
    async fn tick(
        &self,
        scope: &Scope,
        workflow: &Scheduled,
        trigger: &Trigger,
        known: &[ScheduleRow],
    ) -> Result<bool, Error> {
        let key = trigger_key(trigger);
        let now = now_ms();
        let of_workflow = |r: &&ScheduleRow| r.workflow_id == workflow.id;
        let Some(row) = known.iter().filter(of_workflow).find(|r| r.trigger_key == key) else {
            let paused = known.iter().filter(of_workflow).any(|r| r.paused);
            let mut tx = self.inner.store.begin_write().await?;
            rows::add_schedule(&mut tx, &new_row(scope, &workflow.id, key, now, paused)).await?;
            tx.commit().await?;
            return Ok(false);
        };
        if row.paused {
            return Ok(false);
        }
        let Some(due) = trigger.next_after(row.last_slot).filter(|due| *due <= now) else { return Ok(false) };
        let (slot, skipped) = latest_slot(trigger, due, now);
        let claim = SlotClaim {
            project_id: scope.project_id(),
            workflow_id: &workflow.id,
            trigger_key: &key,
            from: row.last_slot,
            slot,
            skipped,
            now,
        };
        let mut tx = self.inner.store.begin_write().await?;
        let won = rows::claim_slot(&mut tx, &claim).await?;
        tx.commit().await?;
        if !won {
            return Ok(false);
        }
        match self.start_slot(scope, workflow, trigger, &claim).await {
            Ok(()) => Ok(true),
            Err(error) => {
                tracing::warn!(
                    "the {} trigger `{}` of workflow {} could not start its run: {error}",
                    trigger.kind(),
                    trigger.expression(),
                    workflow.id
                );
                Ok(false)
            }
        }
    }

    /// Starts the run of claimed slot `claim`, records the slot on it, and drives it in the background.
    async fn start_slot(
        &self,
        scope: &Scope,
        workflow: &Scheduled,
        trigger: &Trigger,
        claim: &SlotClaim<'_>,
    ) -> Result<(), Error> {
        let actor = schedule_actor(&workflow.id, workflow.source == Source::Global);
        let input = trigger.timed_input();
        let start =
            StartRequest { scope, id: &workflow.id, source: Some(workflow.source), input: Some(&input), actor: &actor };
        let approved_text = match workflow.source {
            Source::Repo => self.approved_text(scope, &workflow.id).await?,
            Source::Global => None,
        };
        let options = StartOptions { execution: Some(Execution::Server), approved_text, ..StartOptions::default() };
        let run_id = self.create_run(start, &options).await?;
        let detail = json!({
            "trigger": trigger.kind(),
            "expression": trigger.expression(),
            "slot": rfc3339(claim.slot),
            "slotMs": claim.slot,
            "skippedSlots": claim.skipped,
        });
        self.record(&actor, "schedule", &run_subject(&run_id), detail).await?;
        let mut tx = self.inner.store.begin_write().await?;
        rows::set_schedule_run(&mut tx, (claim.project_id, claim.workflow_id, claim.trigger_key), claim.slot, &run_id)
            .await?;
        tx.commit().await?;
        let (runs, scope, run) = (self.clone(), scope.clone(), run_id);
        tokio::spawn(async move {
            if let Err(error) = runs.drive_created(&scope, &run).await {
                tracing::warn!("run {run} (started by a schedule): {error}");
            }
        });
        Ok(())
    }

    /// The timed triggers of `scope`'s own source, with their next fire times and state; only `workflow` when given.
    pub async fn schedules(&self, scope: &Scope, workflow: Option<&str>) -> Result<Vec<ScheduleView>, Error> {
        let found = self.scheduled(scope);
        let mut conn = self.inner.store.read().await?;
        let known = rows::schedules(&mut conn, scope.project_id()).await?;
        drop(conn);
        let by_key: HashMap<(&str, &str), &ScheduleRow> =
            known.iter().map(|r| ((r.workflow_id.as_str(), r.trigger_key.as_str()), r)).collect();
        let now = now_ms();
        let mut shown = Vec::new();
        for w in found.iter().filter(|w| workflow.is_none_or(|id| id == w.id)) {
            let paused_workflow = known.iter().any(|r| r.workflow_id == w.id && r.paused);
            for trigger in &w.triggers {
                let key = trigger_key(trigger);
                let row = by_key.get(&(w.id.as_str(), key.as_str()));
                let mut next = Vec::new();
                let mut at = now;
                while next.len() < NEXT_SHOWN {
                    let Some(n) = trigger.next_after(at) else { break };
                    next.push(rfc3339(n));
                    at = n;
                }
                shown.push(ScheduleView {
                    workflow_id: w.id.clone(),
                    source: w.source,
                    kind: trigger.kind(),
                    expression: trigger.expression().to_owned(),
                    timezone: match trigger {
                        Trigger::Schedule { timezone, .. } => Some(timezone.clone().unwrap_or_else(|| "UTC".into())),
                        _ => None,
                    },
                    next,
                    paused: row.map_or(paused_workflow, |r| r.paused),
                    last_run_id: row.and_then(|r| r.last_run_id.clone()),
                    last_slot_at: row.filter(|r| r.last_run_id.is_some()).map(|r| rfc3339(r.last_slot)),
                    skipped_slots: row.map_or(0, |r| r.last_skipped),
                });
            }
        }
        Ok(shown)
    }

    /// Pauses (`paused: true`) or resumes every timed trigger of workflow `id` in `scope`'s own source, as `actor`
    /// (recorded); a schedule not seen yet is made paused. Returns the workflow's schedules as they now are.
    pub async fn set_schedules_paused(
        &self,
        scope: &Scope,
        id: &str,
        paused: bool,
        actor: &Actor,
    ) -> Result<Vec<ScheduleView>, Error> {
        let Some(workflow) = self.scheduled(scope).into_iter().find(|w| w.id == id) else {
            let place =
                if scope.root().is_some() { "this project's .roscoe/workflows" } else { "the global workflows" };
            return Err(Error::refused(
                "not_found",
                format!(
                    "no valid workflow '{id}' with a `schedule` or `every` trigger in {place}; `roscoe schedules list` \
                     shows the scheduled workflows (add --global for global ones)"
                ),
            ));
        };
        let now = now_ms();
        let mut tx = self.inner.store.begin_write().await?;
        for trigger in &workflow.triggers {
            rows::add_schedule(&mut tx, &new_row(scope, id, trigger_key(trigger), now, paused)).await?;
        }
        if paused {
            rows::pause_schedules(&mut tx, scope.project_id(), id, now).await?;
        } else {
            rows::resume_schedules(&mut tx, scope.project_id(), id, now).await?;
        }
        tx.commit().await?;
        let action = if paused { "pause_schedule" } else { "resume_schedule" };
        self.record(actor, action, &super::workflow_subject(scope, id), json!({})).await?;
        self.schedules(scope, Some(id)).await
    }
}

impl Runs {
    /// `list_workflows` with each timed trigger marked paused where its workflow's schedules are. Blocks: call it
    /// where blocking is allowed (the tools call it off the async threads).
    pub fn list_workflows(&self, scope: &Scope, source: Option<Source>) -> Result<Vec<WorkflowSummary>, Error> {
        let mut listed = self.inner.service.list_workflows(scope, source)?;
        if listed.iter().any(|w| !w.triggers.is_empty()) {
            let paused = self.paused_workflows(scope)?;
            for w in &mut listed {
                mark(&mut w.triggers, paused.contains(&(w.source, w.id.clone())));
            }
        }
        Ok(listed)
    }

    /// `get_workflow` with its timed triggers marked paused when its schedules are. Blocks, as
    /// [`Runs::list_workflows`].
    pub fn get_workflow(&self, scope: &Scope, id: &str, source: Option<Source>) -> Result<WorkflowDetail, Error> {
        let mut detail = self.inner.service.get_workflow(scope, id, source)?;
        if !detail.trigger_states.is_empty() {
            let paused = self.paused_workflows(scope)?.contains(&(detail.source, id.to_owned()));
            mark(&mut detail.trigger_states, paused);
        }
        Ok(detail)
    }

    /// The workflows of `scope`'s sources whose schedules are paused, by source and id.
    fn paused_workflows(&self, scope: &Scope) -> Result<BTreeSet<(Source, String)>, Error> {
        let read = async {
            let mut conn = self.inner.store.read().await?;
            let mut paused = BTreeSet::new();
            for (source, project) in [(Source::Global, ""), (Source::Repo, scope.project_id())] {
                if source == Source::Repo && project.is_empty() {
                    continue;
                }
                for row in rows::schedules(&mut conn, project).await?.into_iter().filter(|r| r.paused) {
                    paused.insert((source, row.workflow_id));
                }
            }
            Ok::<_, Error>(paused)
        };
        tokio::runtime::Handle::current().block_on(read)
    }
}

/// Marks the timed ones of `triggers` paused when `paused`.
fn mark(triggers: &mut [TriggerState], paused: bool) {
    for t in triggers.iter_mut().filter(|t| t.kind != "webhook") {
        t.paused = paused;
    }
}

/// The actor a schedule of workflow `id` starts runs as; `may_exec` for a global workflow (see the module doc).
fn schedule_actor(id: &str, may_exec: bool) -> Actor {
    Actor { via: "schedule", principal_id: format!("schedule:{id}"), name: format!("schedule:{id}"), may_exec }
}

fn new_row(scope: &Scope, workflow_id: &str, trigger_key: String, now: i64, paused: bool) -> ScheduleRow {
    ScheduleRow {
        project_id: scope.project_id().to_owned(),
        workflow_id: workflow_id.to_owned(),
        trigger_key,
        last_slot: now,
        paused,
        last_run_id: None,
        last_skipped: 0,
        updated_at: now,
    }
}

/// The latest slot at or before `now`, from the first due one `due`, and how many slots before it were passed over.
fn latest_slot(trigger: &Trigger, due: i64, now: i64) -> (i64, i64) {
    if let Trigger::Every { every_ms, .. } = trigger {
        let every = i64::try_from(*every_ms).unwrap_or(i64::MAX);
        let latest = now.div_euclid(every) * every;
        return (latest, (latest - due) / every);
    }
    let (mut slot, mut skipped) = (due, 0);
    while skipped < COUNT_AT_MOST {
        match trigger.next_after(slot) {
            Some(next) if next <= now => {
                slot = next;
                skipped += 1;
            }
            _ => break,
        }
    }
    (slot, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::Cron;

    #[test]
    fn a_catch_up_starts_the_latest_slot_and_counts_the_rest() {
        let every = Trigger::Every { every: "2s".into(), every_ms: 2_000, input: None };
        assert_eq!(latest_slot(&every, 4_000, 4_500), (4_000, 0));
        assert_eq!(latest_slot(&every, 4_000, 14_999), (14_000, 5));
        let cron = Trigger::Schedule { cron: Cron::parse("*/10 * * * *").unwrap(), timezone: None, input: None };
        // Due at 00:10, now 01:05: the latest slot is 01:00 and 00:10…00:50 (five) were passed over.
        assert_eq!(latest_slot(&cron, 600_000, 3_900_000), (3_600_000, 5));
        assert_eq!(trigger_key(&every), "every 2s");
        let zoned = Trigger::Schedule {
            cron: Cron::parse("0 9 * * 1-5").unwrap(),
            timezone: Some("Europe/Paris".into()),
            input: None,
        };
        assert_eq!(trigger_key(&zoned), "schedule 0 9 * * 1-5 Europe/Paris");
    }
}
