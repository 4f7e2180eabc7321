//! The run facade ([`Runs`]): starting, observing, advancing, cancelling and retrying runs stored in the database
//! (§6, §8–§13.4), the run half of what MCP tools, REST endpoints and web pages call.
//!
//! Every change is one write transaction: load the run, [`engine::apply`] the event, store the new state with a
//! version compare-and-swap, commit. The effects the engine asks for are carried out after the commit — scripts run
//! as their own process group ([`script_runner`]), child runs are created and driven, parents are told their child
//! finished — and their results are applied the same way, until the run pauses for the host, finishes, or waits on a
//! human. While a script runs, the run is `running` under this process's id with a lease; a run whose process is
//! gone is reported `failed` (`runner_lost`) by the next process that looks at it, and never re-executed.

#![allow(
    clippy::result_large_err,
    clippy::large_enum_variant,
    reason = "run errors carry their extra fields to the caller once; boxing them would buy nothing"
)]

mod context_file;
mod convert;
pub mod observe;
mod script_runner;
#[cfg(target_os = "linux")]
mod supervisor;
mod test_runner;
mod view;

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use cairn_store::audit::{self, AuditRow};
use cairn_store::changes::Change;
use cairn_store::runs::{self as rows, Connection, RunRow};
use cairn_store::{Backend, Store};
use serde_json::{Map, Value, json};

use crate::actor::Actor;
use crate::authoring_guide::{BUILTIN_DEFAULT_MODEL, Models};
use crate::clock::{SystemEnv, now_ms};
use crate::definition::{self, NodeType, Workflow};
use crate::diagram::{Diagram, NodeStatus, diagram_with_status};
use crate::engine::{
    self, Answer, ChildJob, Effect, Event, ModelSettings, Outcome, PendingStep, Price, Rejection,
    Run, RunStatus, ScriptJob, ScriptResult,
};
use crate::scope::Scope;
use crate::service::Service;
use crate::sources::{Source, Sources};

use convert::{SnapshotCache, node_to_row, run_from_row, run_to_row};

pub use test_runner::{TestOutcome, TestRequest};
pub use view::{AdvanceResult, History, RunSummary, Started, WorkflowInfo};

/// Who a new run is started by, as its row keeps it.
#[derive(Debug, Clone)]
pub(crate) struct Starter {
    /// `mcp`, `web`, `cli` or `test`.
    pub(crate) origin: String,
    /// The principal's name.
    pub(crate) name: Option<String>,
    /// Whether the run may run scripts.
    pub(crate) exec_allowed: bool,
}

impl Starter {
    /// The starter of a run `actor` starts.
    pub(crate) fn of(actor: &Actor) -> Starter {
        Starter { origin: actor.via.to_owned(), name: Some(actor.name.clone()), exec_allowed: actor.may_exec }
    }
}

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

/// How long a running run's claim lasts without renewal.
const LEASE_MS: i64 = 30_000;
/// How often a running script's claim is renewed.
const RENEW_EVERY: Duration = Duration::from_secs(10);
/// The `cairn serve` address used when no server file names another.
const DEFAULT_BASE_URL: &str = "http://127.0.0.1:7777";

/// Why a run operation failed: a user error (`{ error, code }`, the run untouched) or an internal one.
#[derive(Clone, Debug, PartialEq)]
pub struct RunError {
    /// Stable code (§19).
    pub code: String,
    /// What happened and what to do.
    pub message: String,
    /// Extra fields for the error body.
    pub extra: Map<String, Value>,
    /// A server failure (database, I/O) rather than a problem with the request.
    pub internal: bool,
}

impl RunError {
    /// A user error.
    pub fn user(code: &str, message: impl Into<String>) -> Self {
        RunError {
            code: code.to_owned(),
            message: message.into(),
            extra: Map::new(),
            internal: false,
        }
    }

    /// A server failure.
    pub fn internal(message: impl Into<String>) -> Self {
        RunError {
            code: "internal".into(),
            message: message.into(),
            extra: Map::new(),
            internal: true,
        }
    }

    /// `Run not found.` — also for runs of another project (§3: never leak that they exist).
    pub fn not_found() -> Self {
        RunError::user("not_found", "Run not found.")
    }

    /// `{ error, code, …extra }`.
    pub fn body(&self) -> Value {
        let mut body = Map::new();
        body.insert("error".into(), json!(self.message));
        body.insert("code".into(), json!(self.code));
        body.extend(self.extra.clone());
        Value::Object(body)
    }
}

impl From<Rejection> for RunError {
    fn from(r: Rejection) -> Self {
        RunError {
            code: r.code.to_owned(),
            message: r.message,
            extra: r.extra,
            internal: false,
        }
    }
}

impl From<crate::Error> for RunError {
    fn from(e: crate::Error) -> Self {
        let Value::Object(mut body) = e.body() else {
            unreachable!("error bodies are objects")
        };
        body.remove("error");
        body.remove("code");
        RunError {
            code: e.as_code().to_owned(),
            message: e.to_string(),
            extra: body,
            internal: false,
        }
    }
}

impl From<cairn_store::Error> for RunError {
    fn from(e: cairn_store::Error) -> Self {
        RunError::internal(e.to_string())
    }
}

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
    pid: u32,
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
}

impl Runs {
    /// Runs stored in `store`, with workflows from `service`'s sources. Removes the script context files that servers
    /// which are gone left behind.
    pub fn new(store: Store, service: Service) -> Self {
        context_file::sweep(service.home());
        Runs {
            inner: Arc::new(Inner {
                store,
                service,
                snapshots: SnapshotCache::default(),
                pid: std::process::id(),
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
    ) -> Result<Started, RunError> {
        self.start_workflow_for(scope, id, source, input, actor, None).await
    }

    /// [`Runs::start_workflow`] for an MCP client named `client`: a workflow with fan-out nodes started by a host
    /// that cannot spawn subagents gets a `hostHint` (§9.6), and so do its later fan-out steps.
    pub async fn start_workflow_for(
        &self,
        scope: &Scope,
        id: &str,
        source: Option<Source>,
        input: Option<Value>,
        actor: &Actor,
        client: Option<&str>,
    ) -> Result<Started, RunError> {
        let prepared = self.prepare(scope, id, source)?;
        if !actor.may_exec && prepared.workflow.nodes.iter().any(|n| n.kind == NodeType::Script) {
            return Err(RunError::user("insufficient_scope", actor.exec_refusal(&format!("workflow '{id}'"))));
        }
        let starter = Starter::of(actor);
        let mut row = self.new_run_row(scope, &prepared, input.as_ref(), &starter, "user", None)?;
        let host = view::host(client);
        row.host = Some(host.to_string());
        let run_id = row.id.clone();
        self.insert(&row).await?;
        self.record(actor, "start", &run_subject(&run_id), json!({ "workflowId": prepared.workflow.id })).await?;
        self.drive(&run_id, Event::Start).await?;
        let mut result = self.result_for(&run_id, scope).await?;
        if prepared.workflow.nodes.iter().any(|n| n.kind.is_fanout()) {
            result.host_hint = result.host_hint.take().or_else(|| view::host_hint(&host));
        }
        let name = prepared.workflow.id.clone();
        let description = prepared.workflow.description.clone();
        let narration = format!(
            "Running **{name}**{}. Follow along live: {}",
            description
                .as_deref()
                .map(|d| format!(" — {d}"))
                .unwrap_or_default(),
            result.url
        );
        Ok(Started {
            workflow: WorkflowInfo {
                id: name.clone(),
                name,
                description,
            },
            narration,
            result,
        })
    }

    /// `get_run_status`: the tree's root, its deepest pending step and costs.
    pub async fn get_run_status(&self, scope: &Scope, run_id: &str) -> Result<AdvanceResult, RunError> {
        let row = self.load_scoped(scope, run_id).await?;
        self.detect_lost(&row.root_run_id).await?;
        self.result_for(&row.root_run_id, scope).await
    }

    /// `advance_run` / `advance_consensus` / `advance_round_robin` / `advance_map`: applies `answer` to the pending
    /// step of the tree `run_id` belongs to.
    pub async fn advance(
        &self,
        scope: &Scope,
        run_id: &str,
        node_id: Option<String>,
        answer: Answer,
    ) -> Result<AdvanceResult, RunError> {
        let row = self.load_scoped(scope, run_id).await?;
        self.detect_lost(&row.root_run_id).await?;
        let target = self.pending_owner(&row.root_run_id).await?;
        let notice = self
            .drive(&target, Event::Answer { node_id, answer })
            .await?;
        self.answered(&row.root_run_id, scope, notice).await
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
    ) -> Result<AdvanceResult, RunError> {
        let row = self.load_scoped(scope, run_id).await?;
        self.detect_lost(&row.root_run_id).await?;
        let target = self.pending_owner(&row.root_run_id).await?;
        let detail = json!({ "nodeId": node_id, "transition": transition, "comment": comment });
        let answer =
            Answer::Human { transition, comment, decided_by: actor.via.to_owned(), principal: actor.name.clone() };
        let notice = self.drive(&target, Event::Answer { node_id, answer }).await?;
        if notice.is_none() {
            self.record(actor, "decide", &run_subject(&row.root_run_id), detail).await?;
        }
        self.answered(&row.root_run_id, scope, notice).await
    }

    /// The tree's result after an answer, carrying the answer's notice (recorded but not accepted) if it had one.
    async fn answered(
        &self,
        root_run_id: &str,
        scope: &Scope,
        notice: Option<Rejection>,
    ) -> Result<AdvanceResult, RunError> {
        let mut result = self.result_for(root_run_id, scope).await?;
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
    ) -> Result<AdvanceResult, RunError> {
        let row = self.load_scoped(scope, run_id).await?;
        self.detect_lost(&row.root_run_id).await?;
        self.cancel_tree(&row.root_run_id, reason.clone()).await?;
        self.record(actor, "cancel", &run_subject(&row.root_run_id), json!({ "reason": reason })).await?;
        self.result_for(&row.root_run_id, scope).await
    }

    /// `retry_run`: re-drives a failed or cancelled top-level run from the node it stopped at.
    pub async fn retry_run(&self, scope: &Scope, run_id: &str, actor: &Actor) -> Result<AdvanceResult, RunError> {
        let row = self.load_scoped(scope, run_id).await?;
        self.detect_lost(&row.root_run_id).await?;
        self.record(actor, "retry", &run_subject(&row.root_run_id), json!({ "runId": run_id })).await?;
        self.drive(run_id, Event::Retry).await?;
        self.result_for(&row.root_run_id, scope).await
    }

    /// Records that `actor` did `action` to `subject` (`audit_events`): run actions here, workflow writes for the
    /// adapters that make them.
    pub async fn record(&self, actor: &Actor, action: &str, subject: &str, detail: Value) -> Result<(), RunError> {
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
    pub async fn list_runs(&self, scope: &Scope, query: &ListRuns) -> Result<Vec<RunSummary>, RunError> {
        let limit = query.limit.unwrap_or(20);
        if !(1..=200).contains(&limit) {
            return Err(RunError::user("invalid_input", "`limit` must be between 1 and 200"));
        }
        if let Some(status) = &query.status
            && RunStatus::from_name(status).is_none()
        {
            return Err(RunError::user(
                "invalid_input",
                format!("unknown status '{status}'; use running, paused, completed, failed or cancelled"),
            ));
        }
        let filter = rows::ListFilter {
            project_id: scope.project_id().to_owned(),
            status: query.status.clone(),
            workflow_id: query.workflow_id.clone(),
            include_children: query.include_children,
            limit,
        };
        let mut conn = self.inner.store.read().await?;
        let found = rows::list_runs(&mut conn, &filter).await?;
        Ok(found.into_iter().map(view::summary).collect())
    }

    /// `get_run_history`: one run (exactly the one asked for) and its node runs, children nested.
    pub async fn get_run_history(&self, scope: &Scope, run_id: &str) -> Result<History, RunError> {
        let row = self.load_scoped(scope, run_id).await?;
        self.detect_lost(&row.root_run_id).await?;
        let mut conn = self.inner.store.read().await?;
        let row = rows::get_run(&mut conn, run_id).await?.ok_or_else(RunError::not_found)?;
        let children = rows::child_run_ids(&mut conn, run_id).await?;
        let nodes = rows::node_runs(&mut conn, run_id).await?;
        let actions = audit::for_subject(&mut *conn, &run_subject(&row.root_run_id)).await?;
        Ok(view::history(&row, children, &nodes, &actions))
    }

    /// `get_workflow_diagram` with `run_id`: the run's snapshotted workflow with each node's latest status.
    pub async fn run_diagram(&self, scope: &Scope, run_id: &str) -> Result<Diagram, RunError> {
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
    pub async fn sweep_test_runs(&self) -> Result<usize, RunError> {
        let mut conn = self.inner.store.read().await?;
        let candidates = rows::test_runs(&mut conn).await?;
        drop(conn);
        let now = now_ms();
        let mut swept = 0;
        for (id, owner, started_at) in candidates {
            let dead = owner.is_some_and(|pid| {
                pid as u32 != self.inner.pid
                    && script_runner::process_alive(pid as u32) == Some(false)
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
    async fn load_scoped(&self, scope: &Scope, run_id: &str) -> Result<RunRow, RunError> {
        if run_id.is_empty() || !run_id.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(RunError::not_found());
        }
        let mut conn = self.inner.store.read().await?;
        match rows::get_run(&mut conn, run_id).await? {
            Some(row) if row.project_id == scope.project_id() => Ok(row),
            _ => Err(RunError::not_found()),
        }
    }

    /// The run of the tree that owns the pending step: follow `awaiting_child` down from the root.
    async fn pending_owner(&self, root_id: &str) -> Result<String, RunError> {
        let mut conn = self.inner.store.read().await?;
        let tree = rows::runs_in_tree(&mut conn, root_id).await?;
        Ok(view::deepest(&tree, root_id).id.clone())
    }

    /// Brings a tree up to date before it is read or changed: runs whose executing process is gone fail
    /// (`runner_lost`), and human steps left unanswered past their node's `timeoutMs` take their `timeout` route.
    async fn detect_lost(&self, root_id: &str) -> Result<(), RunError> {
        let mut conn = self.inner.store.read().await?;
        let tree = rows::runs_in_tree(&mut conn, root_id).await?;
        let mut expired = Vec::new();
        for row in tree.iter().filter(|r| r.status == "paused") {
            let Some(step) = row.pending_step.as_deref().and_then(|p| serde_json::from_str::<PendingStep>(p).ok())
            else {
                continue;
            };
            let (workflow, _) = self.inner.snapshots.decode(&row.workflow_id, &row.workflow_snapshot)?;
            let timeout = workflow
                .node(&step.node_id)
                .filter(|n| n.kind == NodeType::Human)
                .and_then(|n| n.timeout_ms);
            if let Some(timeout) = timeout
                && let Some(open) = rows::open_node_run(&mut conn, &row.id).await?
                && now_ms() >= open.started_at + timeout as i64
            {
                expired.push((row.id.clone(), open.id));
            }
        }
        drop(conn);
        for row in tree.iter().filter(|r| self.is_lost(r)) {
            self.drive(&row.id, Event::RunnerLost).await?;
        }
        for (run_id, node_run_id) in expired {
            // Another caller may have answered or timed it out first; then there is nothing to do.
            let _ = self.drive(&run_id, Event::StepTimedOut { node_run_id }).await;
        }
        Ok(())
    }

    fn is_lost(&self, row: &RunRow) -> bool {
        if row.status != "running" {
            return false;
        }
        let now = now_ms();
        match row.owner_pid {
            Some(pid) if pid as u32 == self.inner.pid => false,
            Some(pid) => {
                let dead = self.inner.store.backend() == Backend::Sqlite
                    && script_runner::process_alive(pid as u32) == Some(false);
                dead || row.lease_expires_at.is_some_and(|t| t < now)
            }
            None => now - row.updated_at > LEASE_MS,
        }
    }

    async fn insert(&self, row: &RunRow) -> Result<(), RunError> {
        let mut tx = rows::begin(&self.inner.store).await?;
        if let Some(root) = &row.project_root {
            let name = Path::new(root)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            rows::touch_project(&mut tx, &row.project_id, root, &name, row.started_at).await?;
        }
        rows::insert_run(&mut tx, row).await?;
        rows::commit(tx).await?;
        Ok(())
    }

    /// Applies `event` to run `run_id` and carries out the effects until nothing is left to do. Returns the
    /// notice of the first event (an answer recorded but not accepted); a rejected first event is the error.
    async fn drive(&self, run_id: &str, event: Event) -> Result<Option<Rejection>, RunError> {
        self.drive_mocked(run_id, event, None).await
    }

    /// [`Runs::drive`], with `test_workflow`'s mocks standing in for scripts and subworkflows that have one.
    async fn drive_mocked(
        &self,
        run_id: &str,
        event: Event,
        mocks: Option<&Map<String, Value>>,
    ) -> Result<Option<Rejection>, RunError> {
        let mut queue = VecDeque::from([(run_id.to_owned(), event)]);
        let mut first = true;
        let mut notice = None;
        while let Some((id, event)) = queue.pop_front() {
            let outcome = match self.step(&id, event).await {
                Ok(outcome) => outcome,
                Err(error) if first => return Err(error),
                // A late result for a run that moved on (e.g. a script finishing after a cancel) changes nothing.
                Err(error) if !error.internal => continue,
                Err(error) => return Err(error),
            };
            if first {
                notice = outcome.notice.clone();
                first = false;
            }
            for effect in outcome.effects.clone() {
                match effect {
                    Effect::RunScript(job) => {
                        let mock = self.mock_for(mocks, &outcome.run, &job.node_id).await?;
                        let result = match mock {
                            Some(mock) => test_runner::script_result(&mock, &job.success_codes),
                            None if !outcome.run.exec_allowed => ScriptResult {
                                spawn_error: Some(
                                    "this run was started by a principal without the roscoe:exec scope, so it runs \
                                     no `script` node; start it with a token that has roscoe:exec"
                                        .into(),
                                ),
                                attempts: 1,
                                ..ScriptResult::default()
                            },
                            None => self.run_script(&outcome.run, &job).await,
                        };
                        queue.push_back((
                            id.clone(),
                            Event::ScriptFinished {
                                node_run_id: job.node_run_id.clone(),
                                result,
                            },
                        ));
                    }
                    Effect::StartChild(job) => match self.child_mock(mocks, &outcome.run).await? {
                        Some((status, output)) => queue.push_back((
                            id.clone(),
                            Event::ChildFinished {
                                child_run_id: job.child_run_id.clone(),
                                status,
                                output,
                                error: (status != RunStatus::Completed).then(|| "mocked failure".to_owned()),
                                error_code: None,
                            },
                        )),
                        None => match self.create_child(&outcome.run, &job).await {
                        Ok(()) => queue.push_back((job.child_run_id.clone(), Event::Start)),
                        Err(error) if !error.internal => queue.push_back((
                            id.clone(),
                            Event::ChildFinished {
                                child_run_id: job.child_run_id.clone(),
                                status: RunStatus::Failed,
                                output: None,
                                error: Some(error.message),
                                error_code: Some(error.code),
                            },
                        )),
                        Err(error) => return Err(error),
                        },
                    },
                    Effect::NotifyParent { parent_run_id } => queue.push_back((
                        parent_run_id,
                        Event::ChildFinished {
                            child_run_id: outcome.run.id.clone(),
                            status: outcome.run.status,
                            output: outcome.run.output.clone(),
                            error: outcome.run.error.clone(),
                            error_code: outcome.run.error_code.clone(),
                        },
                    )),
                    Effect::Kill { pid } => kill_later(pid, &outcome.run.id),
                }
            }
        }
        Ok(notice)
    }

    /// The mock of node `node_id` of `run`, in a test.
    async fn mock_for(
        &self,
        mocks: Option<&Map<String, Value>>,
        run: &Run,
        node_id: &str,
    ) -> Result<Option<Value>, RunError> {
        let Some(mocks) = mocks else { return Ok(None) };
        let key = format!("{}{node_id}", self.mock_prefix(run.parent_node_run_id.clone()).await?);
        let visit = run.open.as_ref().map_or(1, |open| open.iteration);
        Ok(test_runner::for_visit(mocks.get(&key), visit).cloned())
    }

    /// The mocked outcome of the subworkflow node `run` is entering, in a test.
    async fn child_mock(
        &self,
        mocks: Option<&Map<String, Value>>,
        run: &Run,
    ) -> Result<Option<(RunStatus, Option<Value>)>, RunError> {
        let Some(open) = &run.open else { return Ok(None) };
        let mock = self.mock_for(mocks, run, &open.node_id).await?;
        Ok(mock.as_ref().map(test_runner::child_outcome))
    }

    /// One transaction: load, apply, store with the version check, commit.
    async fn step(&self, run_id: &str, event: Event) -> Result<Outcome, RunError> {
        let mut tx = rows::begin(&self.inner.store).await?;
        let row = rows::lock_run(&mut tx, run_id)
            .await?
            .ok_or_else(RunError::not_found)?;
        let open = rows::open_node_run(&mut tx, run_id).await?;
        let run = run_from_row(&row, open.as_ref(), &self.inner.snapshots)?;
        let outcome = match engine::apply(&run, event, &mut SystemEnv) {
            Ok(outcome) => outcome,
            Err(rejection) => {
                rows::rollback(tx).await?;
                return Err(rejection.into());
            }
        };
        self.persist(&mut tx, &row, &outcome).await?;
        rows::commit(tx).await?;
        self.inner.store.changes().committed(Change::Run(row.root_run_id));
        Ok(outcome)
    }

    async fn persist(&self, tx: &mut Connection, base: &RunRow, outcome: &Outcome) -> Result<(), RunError> {
        let now = now_ms();
        let mut row = run_to_row(&outcome.run, base, now);
        row.version = base.version + 1;
        if outcome.run.status == RunStatus::Running {
            row.owner_pid = Some(i64::from(self.inner.pid));
            row.lease_expires_at = Some(now + LEASE_MS);
        } else if row.kind == "test" {
            // The orphan sweep tells a live test from a crashed one by its process.
            row.owner_pid = Some(i64::from(self.inner.pid));
        }
        if !rows::update_run(tx, &row, base.version).await? {
            return Err(RunError::user(
                "stale_step",
                "the run changed while this answer was being applied; call get_run_status and answer the current step",
            ));
        }
        for record in &outcome.records {
            rows::upsert_node_run(tx, &node_to_row(record, &row.id)).await?;
        }
        if let Some(open) = &outcome.run.open {
            rows::upsert_node_run(tx, &node_to_row(open, &row.id)).await?;
        }
        let data = json!({ "status": row.status, "node": row.current_node_id }).to_string();
        rows::append_event(tx, &row.id, row.version, now, "state", &data).await?;
        Ok(())
    }

    /// Runs a script, recording its process group so any process can kill it on cancel.
    async fn run_script(&self, run: &Run, job: &ScriptJob) -> ScriptResult {
        let cwd = self.script_cwd(run, job);
        // The group of the attempt running now (0 between attempts), for the lease renewal to stop.
        let group = Arc::new(AtomicU32::new(0));
        let renew = {
            let store = self.inner.store.clone();
            let (run_id, pid, group) = (run.id.clone(), i64::from(self.inner.pid), group.clone());
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(RENEW_EVERY).await;
                    let Ok(mut tx) = rows::begin(&store).await else { continue };
                    let renewed = rows::renew_lease(&mut tx, &run_id, pid, now_ms() + LEASE_MS).await;
                    let _ = rows::commit(tx).await;
                    if let Ok(false) = renewed {
                        // The run is no longer ours to run (cancelled, perhaps through another node): stop the script.
                        kill_later(group.load(Ordering::Relaxed), &run_id);
                        break;
                    }
                }
            })
        };
        let mut attempts = 0;
        let mut wait = job.retry.backoff_ms as f64;
        let result = loop {
            attempts += 1;
            let (sender, receiver) = tokio::sync::oneshot::channel();
            let current = group.clone();
            let runner = script_runner::run_once(job, &cwd, self.home(), move |pid| {
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
            result.attempts = attempts;
            if result.success || attempts >= job.retry.max_attempts || !self.still_running(run, job).await {
                break result;
            }
            tokio::time::sleep(Duration::from_millis(wait as u64)).await;
            wait *= job.retry.backoff_rate;
        };
        renew.abort();
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
    async fn create_child(&self, parent: &Run, job: &ChildJob) -> Result<(), RunError> {
        let scope = run_scope(parent);
        let source = match job.source.as_deref() {
            Some(s) => Some(s.parse::<Source>()?),
            None => None,
        };
        let prepared = self.prepare(&scope, &job.workflow, source).map_err(|e| {
            if e.code == "not_found" {
                RunError::user("workflow_not_found", format!("subworkflow '{}' was not found", job.workflow))
            } else {
                e
            }
        })?;
        let input = Value::Object(job.inputs.clone());
        let starter = Starter { origin: parent.source.clone(), name: parent.started_by.clone(), exec_allowed: parent.exec_allowed };
        let mut row = self.new_run_row(&scope, &prepared, Some(&input), &starter, &parent.kind, Some(parent))?;
        row.id = job.child_run_id.clone();
        row.parent_node_run_id = Some(job.node_run_id.clone());
        self.insert(&row).await
    }

    /// Resolves, reads and validates a workflow for a new run.
    fn prepare(&self, scope: &Scope, id: &str, source: Option<Source>) -> Result<Prepared, RunError> {
        let sources = Sources::new(self.home(), scope);
        let located = sources.resolve(id, source)?;
        let text = located.read()?;
        let workflow = definition::parse(&text, Some(id)).map_err(|diagnostics| {
            let details: Vec<String> = diagnostics.iter().map(|d| d.to_string()).collect();
            let integrity = diagnostics.iter().any(|d| d.code.stage() == definition::Stage::Integrity);
            let code = if integrity { "integrity_error" } else { "invalid_config" };
            let mut error = RunError::user(
                code,
                format!("workflow '{id}' is not valid; fix every entry of `details` (validate_workflow shows them)"),
            );
            error.extra.insert("details".into(), json!(details));
            error
        })?;
        let config = definition::read_yaml(&text)
            .map(|doc| doc.value)
            .map_err(|e| RunError::user("invalid_config", e))?;
        Ok(Prepared {
            models: self.model_settings(scope),
            workflow: Arc::new(workflow),
            config,
            source: located.source,
            path: located.path.display().to_string(),
            dir: located.assets().display().to_string(),
        })
    }

    fn model_settings(&self, scope: &Scope) -> ModelSettings {
        let models = self.inner.service.models(scope).unwrap_or_else(|_| Models {
            default: BUILTIN_DEFAULT_MODEL.to_owned(),
            available: Vec::new(),
            aliases: Vec::new(),
        });
        let mut pricing = std::collections::BTreeMap::new();
        let mut files = vec![self.home().join("roscoe.yaml")];
        if let Some(root) = scope.root() {
            files.push(root.join("roscoe.yaml"));
        }
        for file in files {
            let Ok(bytes) = crate::files::read_regular(&file, crate::sources::MAX_FILE_BYTES as u64) else { continue };
            let Ok(text) = String::from_utf8(bytes) else { continue };
            let Ok(doc) = cairn_yaml::parse(&text) else { continue };
            if let Some(Value::Object(prices)) = doc.value.get("pricing") {
                pricing.clear();
                for (model, price) in prices {
                    let read = |k: &str| price.get(k).and_then(Value::as_f64).unwrap_or(0.0);
                    pricing.insert(model.clone(), Price { input: read("input"), output: read("output") });
                }
            }
        }
        ModelSettings {
            default: models.default,
            aliases: models.aliases.into_iter().collect(),
            pricing,
        }
    }

    fn new_run_row(
        &self,
        scope: &Scope,
        prepared: &Prepared,
        input: Option<&Value>,
        starter: &Starter,
        kind: &str,
        parent: Option<&Run>,
    ) -> Result<RunRow, RunError> {
        let input = engine::validate_inputs(&prepared.workflow, input).map_err(|message| {
            RunError::user("invalid_input", format!("{message}; see the workflow's `inputs`"))
        })?;
        let id = crate::clock::new_id();
        let now = now_ms();
        Ok(RunRow {
            root_run_id: parent.map_or_else(|| id.clone(), |p| p.root_run_id.clone()),
            parent_run_id: parent.map(|p| p.id.clone()),
            parent_node_run_id: None,
            depth: parent.map_or(0, |p| i64::from(p.depth) + 1),
            id,
            project_id: scope.project_id().to_owned(),
            project_root: scope.root().map(|r| r.display().to_string()),
            workflow_id: prepared.workflow.id.clone(),
            workflow_name: prepared.workflow.id.clone(),
            workflow_description: prepared.workflow.description.clone(),
            workflow_source: prepared.source.as_str().to_owned(),
            workflow_path: prepared.path.clone(),
            workflow_dir: prepared.dir.clone(),
            workflow_snapshot: convert::snapshot(&prepared.config, &prepared.models),
            source: starter.origin.clone(),
            kind: kind.to_owned(),
            status: RunStatus::Running.as_str().to_owned(),
            current_node_id: None,
            pending_step: None,
            awaiting_child_run_id: None,
            input: input.to_string(),
            context: "{}".into(),
            output: None,
            error: None,
            error_code: None,
            host: None,
            owner_pid: Some(i64::from(self.inner.pid)),
            lease_expires_at: Some(now + LEASE_MS),
            attempt: 1,
            total_cost_usd: 0.0,
            metered_cost_usd: 0.0,
            subscription_equiv_cost_usd: 0.0,
            billing_mode: "none".into(),
            input_tokens: 0,
            output_tokens: 0,
            started_at: now,
            completed_at: None,
            updated_at: now,
            started_by: starter.name.clone(),
            exec_allowed: starter.exec_allowed,
            version: 0,
        })
    }

    /// Cancels every non-terminal run of a tree in one transaction, then kills their scripts.
    async fn cancel_tree(&self, root_id: &str, reason: Option<String>) -> Result<(), RunError> {
        let mut tx = rows::begin(&self.inner.store).await?;
        let tree = rows::lock_tree(&mut tx, root_id).await?;
        let root = tree.iter().find(|r| r.id == root_id).ok_or_else(RunError::not_found)?;
        if let Some(status) = RunStatus::from_name(&root.status).filter(|s| s.is_terminal()) {
            rows::rollback(tx).await?;
            return Err(RunError::user("terminal", format!("Run is already {}.", status.as_str())));
        }
        let mut kills = Vec::new();
        for row in tree.iter().filter(|r| {
            RunStatus::from_name(&r.status).is_some_and(|s| !s.is_terminal())
        }) {
            let open = rows::open_node_run(&mut tx, &row.id).await?;
            let run = run_from_row(row, open.as_ref(), &self.inner.snapshots)?;
            let reason = reason.clone().or_else(|| (row.id != root_id).then(|| "Cancelled with its parent run".to_owned()));
            let outcome = engine::apply(&run, Event::Cancel { reason }, &mut SystemEnv)?;
            kills.extend(outcome.effects.iter().filter_map(|e| match e {
                Effect::Kill { pid } => Some((*pid, row.id.clone())),
                _ => None,
            }));
            self.persist(&mut tx, row, &outcome).await?;
        }
        rows::commit(tx).await?;
        self.inner.store.changes().committed(Change::Run(root_id.to_owned()));
        for (pid, run_id) in kills {
            kill_later(pid, &run_id);
        }
        Ok(())
    }

    /// The AdvanceResult of the tree rooted at `root_id`.
    async fn result_for(&self, root_id: &str, scope: &Scope) -> Result<AdvanceResult, RunError> {
        let mut conn = self.inner.store.read().await?;
        let tree = rows::runs_in_tree(&mut conn, root_id).await?;
        if tree.is_empty() {
            return Err(RunError::not_found());
        }
        Ok(view::advance_result(&tree, root_id, &self.url(root_id, scope)))
    }

    /// The deep link of a run (§9.4).
    fn url(&self, run_id: &str, scope: &Scope) -> String {
        let project = match scope.project_id() {
            "" => "global",
            id => id,
        };
        format!("{}/open/runs/{run_id}?project={project}", self.base_url())
    }

    fn base_url(&self) -> String {
        if let Some(url) = std::env::var("ROSCOE_PUBLIC_URL").ok().filter(|u| !u.is_empty()) {
            return url.trim_end_matches('/').to_owned();
        }
        let server = std::fs::read_to_string(self.home().join("server.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok());
        if let Some(server) = server {
            let alive = server["pid"]
                .as_u64()
                .is_none_or(|pid| script_runner::process_alive(pid as u32) != Some(false));
            if alive {
                if let Some(url) = server["url"].as_str() {
                    return url.trim_end_matches('/').to_owned();
                }
                if let Some(port) = server["port"].as_u64() {
                    return format!("http://127.0.0.1:{port}");
                }
            }
        }
        DEFAULT_BASE_URL.to_owned()
    }
}

/// A workflow ready to run.
struct Prepared {
    workflow: Arc<Workflow>,
    config: Value,
    models: ModelSettings,
    source: Source,
    path: String,
    dir: String,
}

/// The scope a run was started in.
fn run_scope(run: &Run) -> Scope {
    match &run.project_root {
        Some(root) => Scope::Project {
            cwd: PathBuf::from(root),
            root: PathBuf::from(root),
            project_id: run.project_id.clone(),
        },
        None => Scope::Global,
    }
}

/// SIGTERM to the process group of a script of `run_id` now (on Linux its supervisor then stops the whole tree), SIGKILL
/// to the group once the grace is over — if that script runs on this machine; one on another node's machine is stopped
/// by its own node when its lease renewal finds the run over.
fn kill_later(pid: u32, run_id: &str) {
    if !script_runner::is_script_of(pid, run_id) {
        return;
    }
    script_runner::kill_group(pid, false);
    tokio::spawn(async move {
        tokio::time::sleep(script_runner::GRACE).await;
        script_runner::kill_group(pid, true);
    });
}
