//! The run facade ([`Runs`]): starting, observing, advancing, cancelling and retrying runs stored in the database
//! (§6, §8–§13.4), the run half of what MCP tools, REST endpoints and web pages call.
//!
//! A call reads the run's tree once ([`tree`]), brings it up to date ([`lease`]: runs whose process is gone fail
//! `runner_lost`, human steps past their timeout take their `timeout` route — which every server also does on its own,
//! on time, from the durable timers of [`timers`]), and drives the event it carries
//! ([`drive`]): every change is one write transaction — load the run, [`engine::apply`] the event, store the new state
//! with a version compare-and-swap, commit — and the effects the engine asks for are carried out after the commit by
//! an effect runner ([`effects`]: scripts as their own process group, child runs created and driven; `test_workflow`'s
//! mocks in [`test_runner`]), their results applied the same way, until the run pauses for the host, finishes, or
//! waits on a human. The call's result comes from the tree its own writes kept up to date. [`prepare`] makes new
//! runs; [`view`] shapes what the tools return.

mod ask_person;
mod background;
mod budget;
mod calls;
mod context_file;
mod convert;
mod definition_cache;
mod drive;
mod effects;
mod followed;
mod fork;
mod launch;
mod lease;
mod live_output;
mod output_follower;
mod notify;
pub mod observe;
mod processes;
mod prepare;
mod prices;
mod providers;
mod scheduler;
mod script_runner;
mod server_runs;
pub(crate) mod settings;
mod start;
#[cfg(target_os = "linux")]
mod supervisor;
mod test_live;
mod test_runner;
mod timers;
mod trigger_exec;
mod tree;
mod view;
pub mod webhook;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cairn_store::Store;
use cairn_store::audit::{self, AuditRow};
use cairn_store::runs::{self as rows, RunRow};
use serde_json::{Value, json};

use crate::actor::Actor;
use crate::clock::now_ms;
use crate::diagram::{Diagram, NodeStatus, diagram_with_status};
use crate::engine::{Answer, Event, Rejection, RunStatus};
use crate::error::Error;
use crate::scope::Scope;
use crate::service::Service;
use crate::source::Source;

use convert::SnapshotCache;
use definition_cache::DefinitionCache;
use effects::Executor;
use tree::Tree;

pub use followed::{NodeState, following};
pub use ask_person::AskPerson;
pub use live_output::{Stream, StreamTail, TAIL_BYTES};
pub use output_follower::{LiveLog, OutputFollower, ScriptText};
pub use scheduler::ScheduleView;
pub use start::{StartOptions, StartRequest};
pub use test_runner::{RunFailure, TestOutcome, TestRequest};
pub use notify::{Delivery, DeliveryAttempt, EVENT_HEADER};
pub use trigger_exec::Approved;
pub use view::{AdvanceResult, History, RunSummary, Started, WorkflowInfo};

/// The audit subject of a run tree: `run:<root id>`.
pub fn run_subject(root_run_id: &str) -> String {
    format!("run:{root_run_id}")
}

/// The audit subject of workflow `id` in `scope`: `workflow:<project id or global>/<id>`.
pub fn workflow_subject(scope: &Scope, id: &str) -> String {
    match scope.project_id() {
        "" => format!("workflow:global/{id}"),
        project => format!("workflow:{project}/{id}"),
    }
}

/// The `cairn serve` address used when no server file names another.
const DEFAULT_BASE_URL: &str = "http://127.0.0.1:7777";

/// The run facade: runs in one database, workflows from the sources of a cairn home.
#[derive(Clone, Debug)]
pub struct Runs {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    service: Service,
    snapshots: SnapshotCache,
    definitions: DefinitionCache,
    pid: u32,
    /// Model calls this process may have in flight at once (`calls.concurrencyPerServer`).
    server_slots: Arc<tokio::sync::Semaphore>,
    /// Run trees (by root id) with model calls in flight here, and the switch that abandons them.
    inflight: Mutex<HashMap<String, tokio::sync::watch::Sender<bool>>>,
    /// Where run notifications go: the global `roscoe.yaml`'s `notify` targets, read once at start.
    notify: Vec<notify::targets::NotifyTarget>,
    /// The scripts this process runs now, with what they printed so far.
    live: live_output::LiveScripts,
}

/// What `list_runs` selects.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListRuns {
    /// At most this many (1–200, default 20).
    pub limit: Option<i64>,
    /// Only this status.
    pub status: Option<String>,
    /// Only this workflow.
    pub workflow_id: Option<String>,
    /// Include subworkflow children.
    pub include_children: bool,
    /// Only runs whose id, workflow id or workflow name contains this (case-insensitive); "" for all.
    pub search: String,
    /// Only runs after this `(started at in epoch ms, id)` in the list: the previous page's last row.
    pub after: Option<(i64, String)>,
}

impl Runs {
    /// Runs stored in `store`, with workflows from `service`'s sources. Removes the script context files that servers
    /// which are gone left behind.
    pub fn new(store: Store, service: Service) -> Self {
        context_file::sweep(service.home());
        // The server-wide limit and the notification targets come from the home's roscoe.yaml, read once (a file
        // that cannot be used starts no run, and says so then).
        let global = settings::Settings::read(service.home(), None).ok();
        let limits = global.as_ref().map(|s| s.calls).unwrap_or_default();
        Runs {
            inner: Arc::new(Inner {
                store,
                service,
                snapshots: SnapshotCache::default(),
                definitions: DefinitionCache::default(),
                pid: std::process::id(),
                server_slots: Arc::new(tokio::sync::Semaphore::new(limits.per_server)),
                inflight: Mutex::new(HashMap::new()),
                notify: global.map(|s| s.notify).unwrap_or_default(),
                live: live_output::LiveScripts::default(),
            }),
        }
    }

    /// The database.
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    fn home(&self) -> &Path {
        self.inner.service.home()
    }

    /// `start_workflow`: resolves and validates the workflow and its input, creates the run (started by `actor`,
    /// through `actor.via`: `mcp`, `web`, `cli`) and drives it to its first pause or its end. A workflow with
    /// `script` nodes needs an actor that may run scripts.
    pub async fn start_workflow(
        &self,
        scope: &Scope,
        id: &str,
        source: Option<Source>,
        input: Option<Value>,
        actor: &Actor,
    ) -> Result<Started, Error> {
        let start = StartRequest { scope, id, source, input: input.as_ref(), actor };
        self.start_workflow_with(start, StartOptions::default()).await
    }

    /// `get_run_status`: the tree's root, its deepest pending step and costs.
    /// A paused run's `timeoutAt` says when its human step takes its `timeout` route unanswered.
    pub async fn get_run_status(&self, scope: &Scope, run_id: &str) -> Result<AdvanceResult, Error> {
        let tree = self.current_tree(scope, run_id).await?;
        let mut result = self.result(&tree, scope).await?;
        if result.pending_step.is_some() {
            let due = self.timer_due_at(&view::deepest(tree.rows(), tree.root_id()).id).await?;
            result.timeout_at = due.map(crate::clock::rfc3339);
        }
        Ok(result)
    }

    /// `advance_run` / `advance_consensus` / `advance_round_robin` / `advance_map`: applies `answer` to the pending
    /// step of the tree `run_id` belongs to.
    pub async fn advance(
        &self,
        scope: &Scope,
        run_id: &str,
        node_id: Option<String>,
        answer: Answer,
    ) -> Result<AdvanceResult, Error> {
        let mut tree = self.current_tree(scope, run_id).await?;
        let target = tree.pending_owner();
        let notice = self.drive(&target, Event::Answer { node_id, answer }, &mut tree).await?;
        self.answered(&tree, scope, notice).await
    }

    /// `resume_run`: `actor`'s choice of `transition` at the pending human step of the tree `run_id` belongs to,
    /// recorded with who made it.
    pub async fn resume(
        &self,
        scope: &Scope,
        run_id: &str,
        node_id: Option<String>,
        transition: String,
        comment: Option<String>,
        actor: &Actor,
    ) -> Result<AdvanceResult, Error> {
        let mut tree = self.current_tree(scope, run_id).await?;
        let target = tree.pending_owner();
        let detail = json!({ "nodeId": node_id, "transition": transition, "comment": comment });
        let answer =
            Answer::Human { transition, comment, decided_by: actor.via.to_owned(), principal: actor.name.clone() };
        let notice = self.drive(&target, Event::Answer { node_id, answer }, &mut tree).await?;
        if notice.is_none() {
            self.record(actor, "decide", &run_subject(tree.root_id()), detail).await?;
        }
        self.answered(&tree, scope, notice).await
    }

    /// The tree's result after an answer, carrying the answer's notice (recorded but not accepted) if it had one.
    async fn answered(&self, tree: &Tree, scope: &Scope, notice: Option<Rejection>) -> Result<AdvanceResult, Error> {
        let mut result = self.result(tree, scope).await?;
        if let Some(notice) = notice {
            result.error = Some(notice.message);
            result.code = Some(notice.code.to_owned());
            result.extra = notice.extra;
        }
        Ok(result)
    }

    /// `cancel_run`: cancels the whole tree `run_id` belongs to, kills its running scripts, and returns the tree's
    /// result. A terminal tree is an error (`terminal`).
    pub async fn cancel_run(
        &self,
        scope: &Scope,
        run_id: &str,
        reason: Option<String>,
        actor: &Actor,
    ) -> Result<AdvanceResult, Error> {
        let mut tree = self.current_tree(scope, run_id).await?;
        self.cancel_tree(&mut tree, reason.clone()).await?;
        self.record(actor, "cancel", &run_subject(tree.root_id()), json!({ "reason": reason })).await?;
        self.result(&tree, scope).await
    }

    /// `retry_run`: re-drives a failed or cancelled top-level run from the node it stopped at.
    pub async fn retry_run(&self, scope: &Scope, run_id: &str, actor: &Actor) -> Result<AdvanceResult, Error> {
        let mut tree = self.current_tree(scope, run_id).await?;
        self.record(actor, "retry", &run_subject(tree.root_id()), json!({ "runId": run_id })).await?;
        self.drive(run_id, Event::Retry, &mut tree).await?;
        self.result(&tree, scope).await
    }

    /// Records that `actor` did `action` to `subject` (`audit_events`): run actions here, workflow writes for the
    /// adapters that make them.
    pub async fn record(&self, actor: &Actor, action: &str, subject: &str, detail: Value) -> Result<(), Error> {
        let now = now_ms();
        let row = AuditRow {
            id: format!("{now:013}-{}", crate::clock::new_id()),
            ts: now,
            principal_id: actor.principal_id.clone(),
            principal: actor.name.clone(),
            via: actor.via.to_owned(),
            action: action.to_owned(),
            subject: subject.to_owned(),
            detail: detail.to_string(),
        };
        audit::record(self.inner.store.pool(), &row).await?;
        Ok(())
    }

    /// `list_runs`: the caller's project's runs, newest first (test runs never).
    pub async fn list_runs(&self, scope: &Scope, query: &ListRuns) -> Result<Vec<RunSummary>, Error> {
        let limit = query.limit.unwrap_or(20);
        if !(1..=200).contains(&limit) {
            return Err(Error::InvalidInput("`limit` must be between 1 and 200".into()));
        }
        if let Some(status) = &query.status
            && RunStatus::from_name(status).is_none()
        {
            return Err(Error::InvalidInput(
                format!("unknown status '{status}'; use running, paused, completed, failed or cancelled"),
            ));
        }
        let filter = rows::ListFilter {
            project_id: scope.project_id().to_owned(),
            status: query.status.clone(),
            workflow_id: query.workflow_id.clone(),
            include_children: query.include_children,
            search: Some(query.search.trim().to_owned()).filter(|s| !s.is_empty()),
            after: query.after.clone(),
            limit,
        };
        let mut conn = self.inner.store.read().await?;
        let found = rows::list_runs(&mut conn, &filter).await?;
        Ok(found.into_iter().map(view::summary).collect())
    }

    /// `get_run_history`: one run (exactly the one asked for) and its node runs, children nested.
    pub async fn get_run_history(&self, scope: &Scope, run_id: &str) -> Result<History, Error> {
        self.current_tree(scope, run_id).await?;
        let mut conn = self.inner.store.read().await?;
        let row = rows::get_run(&mut conn, run_id).await?.ok_or_else(Error::run_not_found)?;
        let children = rows::child_run_ids(&mut conn, run_id).await?;
        let nodes = rows::node_runs(&mut conn, run_id).await?;
        let actions = audit::for_subject(&mut *conn, &run_subject(&row.root_run_id)).await?;
        Ok(view::history(&row, children, &nodes, &actions))
    }

    /// `get_workflow_diagram` with `run_id`: the run's snapshotted workflow with each node's latest status.
    pub async fn run_diagram(&self, scope: &Scope, run_id: &str) -> Result<Diagram, Error> {
        let row = self.load_scoped(scope, run_id).await?;
        let (workflow, _) = self.inner.snapshots.decode(&row.workflow_id, &row.workflow_snapshot)?;
        let mut conn = self.inner.store.read().await?;
        let nodes = rows::node_runs(&mut conn, run_id).await?;
        let mut latest: HashMap<&str, NodeStatus> = HashMap::new();
        for node in nodes.iter().filter(|n| n.parent_node_run_id.is_none()) {
            let status = match node.status.as_str() {
                "running" => NodeStatus::Running,
                "paused" => NodeStatus::Paused,
                "completed" => NodeStatus::Completed,
                "cancelled" => NodeStatus::Cancelled,
                _ => NodeStatus::Failed,
            };
            latest.insert(&node.node_id, status);
        }
        Ok(diagram_with_status(&workflow, |id| latest.get(id).copied()))
    }

    /// Deletes test runs left behind by processes that died (§14.6): those whose owner is not alive here, or that
    /// started more than 15 minutes ago. Returns how many were deleted.
    pub async fn sweep_test_runs(&self) -> Result<usize, Error> {
        let mut conn = self.inner.store.read().await?;
        let candidates = rows::test_runs(&mut conn).await?;
        drop(conn);
        let now = now_ms();
        let mut swept = 0;
        for (id, owner, started_at) in candidates {
            let dead = owner.is_some_and(|pid| {
                pid as u32 != self.inner.pid
                    && processes::process_alive(pid as u32) == Some(false)
            });
            if dead || now - started_at > 15 * 60 * 1000 {
                let mut tx = rows::begin(&self.inner.store).await?;
                rows::delete_run_tree(&mut tx, &id).await?;
                rows::commit(tx).await?;
                swept += 1;
            }
        }
        Ok(swept)
    }

    // ----- internals -----

    /// The run `run_id` if it belongs to the caller's project, else `Run not found.`.
    async fn load_scoped(&self, scope: &Scope, run_id: &str) -> Result<RunRow, Error> {
        if run_id.is_empty() || !run_id.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(Error::run_not_found());
        }
        let mut conn = self.inner.store.read().await?;
        match rows::get_run(&mut conn, run_id).await? {
            Some(row) if row.project_id == scope.project_id() => Ok(row),
            _ => Err(Error::run_not_found()),
        }
    }

    /// The tree of run `run_id` (in the caller's project), brought up to date before it is read or changed: runs
    /// whose executing process is gone fail (`runner_lost`), and human steps left unanswered past their node's
    /// `timeoutMs` take their `timeout` route.
    async fn current_tree(&self, scope: &Scope, run_id: &str) -> Result<Tree, Error> {
        let mut tree = self.load_tree(scope, run_id).await?;
        followed::note(tree.root_id());
        let due = self.overdue(tree.rows()).await?;
        for lost in due.lost {
            // Another call may have settled it first; then there is nothing to do.
            match self.drive(&lost, Event::RunnerLost, &mut tree).await {
                Err(error) if !error.is_internal() => tree.mark_stale(),
                done => {
                    done?;
                }
            }
        }
        for (run_id, node_run_id) in due.timed_out {
            // Another caller may have answered or timed it out first; then there is nothing to do.
            if self.drive(&run_id, Event::TimerFired { node_run_id }, &mut tree).await.is_err() {
                tree.mark_stale();
            }
        }
        Ok(tree)
    }

    /// [`Runs::drive_with`] the real effects ([`Executor`]); the model calls of server-executed runs go on in the
    /// background, so the call returns while they are made.
    async fn drive(&self, run_id: &str, event: Event, tree: &mut Tree) -> Result<Option<Rejection>, Error> {
        self.drive_with(run_id, event, &Executor { background: true }, tree).await
    }

    /// The deep link of a run (§9.4), and, when no running server is known to serve it, how to open it.
    fn link(&self, run_id: &str, scope: &Scope) -> (String, Option<String>) {
        let project = match scope.project_id() {
            "" => "global",
            id => id,
        };
        let serve = match scope.root() {
            Some(root) => format!("`cairn serve --project {}`", root.display()),
            None => "`cairn serve`".to_owned(),
        };
        let live = self.live_server();
        let note = match &live {
            None => Some(format!(
                "No `cairn serve` is running for this CAIRN_HOME ({}), so this link does not open yet: start one with \
                 `cairn serve` (it listens on {DEFAULT_BASE_URL} by default; {serve} for this project's runs) and open \
                 the link, or set ROSCOE_PUBLIC_URL to the address of the server that serves these runs.",
                self.home().display()
            )),
            Some((base, Some(served))) if scope.root().is_some_and(|root| !served.iter().any(|s| root.starts_with(s))) => {
                Some(format!(
                    "The `cairn serve` at {base} does not serve this project: it serves only its `--project` folders \
                     and global scope, so this link does not open there; restart it as {serve} to open it."
                ))
            }
            Some(_) => None,
        };
        let base = live.map_or_else(|| DEFAULT_BASE_URL.to_owned(), |(base, _)| base);
        (format!("{base}/open/runs/{run_id}?project={project}"), note)
    }

    /// `$ROSCOE_PUBLIC_URL`, else the address of the running `cairn serve` named by `$CAIRN_HOME/server.json`,
    /// with the project roots that server serves when it says (`projects`).
    fn live_server(&self) -> Option<(String, Option<Vec<PathBuf>>)> {
        if let Some(url) = std::env::var("ROSCOE_PUBLIC_URL").ok().filter(|u| !u.is_empty()) {
            return Some((url.trim_end_matches('/').to_owned(), None));
        }
        let server = std::fs::read_to_string(self.home().join("server.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())?;
        let alive = server["pid"]
            .as_u64()
            .is_none_or(|pid| processes::process_alive(pid as u32) != Some(false));
        if !alive {
            return None;
        }
        let projects = server["projects"]
            .as_array()
            .map(|roots| roots.iter().filter_map(Value::as_str).map(PathBuf::from).collect());
        let base = match server["url"].as_str() {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => format!("http://127.0.0.1:{}", server["port"].as_u64()?),
        };
        Some((base, projects))
    }
}
