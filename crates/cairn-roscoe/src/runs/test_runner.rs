//! `test_workflow` (§14): a real run (`kind: 'test'`, same engine and database) whose handback steps are answered
//! from mocks through the same path a host's answers take, under a wall-clock limit that cancels the run and kills
//! its scripts; the run tree is deleted afterwards whatever happened.
//!
//! Mocks are keyed by node id (`<subworkflow node>/<child node>` inside child runs). A single mock answers every
//! visit; a list answers visit *n* with element *n*−1. Scripts and subworkflow nodes may be mocked too: the test's
//! effect runner (`Mocked`) answers them from their mock, and hands those without one to the real `Executor`.
//! Fan-out nodes run on their mocks; without one they are refused up front unless a model provider serves the
//! workflow's default model, and then run live (`test_live.rs`), as does every AI step inside a child run.

use std::time::{Duration, Instant};

use cairn_store::runs::{self as rows, RunRow};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::drive::{DEADLINE, EffectRunner};
use super::effects::Executor;
use super::prepare::{Prepared, Starter};
use super::settings::Settings;
use super::tree::Tree;
use super::providers;
use super::{Runs, view};
use crate::actor::Actor;
use crate::clock::now_ms;
use crate::definition::{self, NodeType};
use crate::engine::{
    Answer, ChildJob, DELAY_PHASE, Event, ModelJob, PendingStep, Run, RunStatus, ScriptJob, ScriptResult,
};
use crate::error::Error;
use crate::scope::Scope;
use crate::source::Source;
use crate::sources::Sources;

/// The default and largest `timeout_ms`.
const DEFAULT_TIMEOUT_MS: u64 = 60_000;
const MAX_TIMEOUT_MS: u64 = 600_000;

/// What `test_workflow` runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TestRequest {
    /// A stored workflow's id (exactly one of `id`, `config`, `yaml`).
    pub id: Option<String>,
    /// With `id`: its source.
    pub source: Option<Source>,
    /// The workflow as a JSON object.
    pub config: Option<Value>,
    /// The workflow as YAML text.
    pub yaml: Option<String>,
    /// Run inputs.
    pub input: Option<Value>,
    /// Answers by node id.
    pub mocks: Option<Value>,
    /// Wall-clock limit in milliseconds (default 60000, at most 600000).
    pub timeout_ms: Option<u64>,
}

/// The result of `test_workflow`: `{ ok: true, finalStatus, durationMs, nodeTrace }` or `{ ok: false, code, message,
/// … }`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TestOutcome {
    /// Whether the test ran (whatever the workflow's outcome).
    pub ok: bool,
    /// Why it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// What happened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The node concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    /// Its type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_type: Option<String>,
    /// The run's last status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub final_status: Option<String>,
    /// Wall-clock time of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The node runs (get_run_history's shape; a subworkflow node's child run inlined as its children).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_trace: Option<Vec<Value>>,
    /// One line per validation problem.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Vec<String>>,
    /// Why a run that ran did not complete (`finalStatus` failed or cancelled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<RunFailure>,
}

/// Why a test run ended failed or cancelled: the run's error and its code, and the last node that failed (else the
/// last node that ran) with the event it ended with.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunFailure {
    /// The run's error (`no transition for event …`, a script's exit code, a cancellation's reason).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its code (`no_transition`, `budget_exceeded`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    /// Its type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_type: Option<String>,
    /// The event it ended with (`failure`, `timeout`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// The node's own error, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_error: Option<String>,
}

impl RunFailure {
    /// The failure of a root run that ended `status` with `error`/`code`, from its node trace; none if it completed.
    fn of(status: &str, error: Option<String>, code: Option<String>, trace: &[Value]) -> Option<RunFailure> {
        if status != "failed" && status != "cancelled" {
            return None;
        }
        let node = trace.iter().rev().find(|n| n["status"] == "failed").or(trace.last());
        let text = |key: &str| node.and_then(|n| n[key].as_str()).map(str::to_owned);
        Some(RunFailure {
            error,
            code,
            node_id: text("nodeId"),
            node_type: text("nodeType"),
            event: text("event"),
            node_error: text("error"),
        })
    }
}

impl TestOutcome {
    fn failure(code: &str, message: impl Into<String>) -> Self {
        TestOutcome {
            ok: false,
            code: Some(code.to_owned()),
            message: Some(message.into()),
            ..TestOutcome::default()
        }
    }
}

/// The effects of a test run: mocks stand in for the scripts and subworkflow nodes that have one, the rest are
/// carried out for real.
struct Mocked<'m> {
    mocks: &'m Map<String, Value>,
}

impl Mocked<'_> {
    /// The mock of node `node_id` of `run` for its current visit.
    async fn mock(&self, runs: &Runs, run: &Run, node_id: &str) -> Result<Option<Value>, Error> {
        let key = format!("{}{node_id}", runs.mock_prefix(run.parent_node_run_id.clone()).await?);
        let visit = run.open.as_ref().map_or(1, |open| open.iteration);
        Ok(for_visit(self.mocks.get(&key), visit).cloned())
    }
}

impl EffectRunner for Mocked<'_> {
    async fn run_script(&self, runs: &Runs, run: &Run, job: &ScriptJob) -> Result<ScriptResult, Error> {
        match self.mock(runs, run, &job.node_id).await? {
            Some(mock) => Ok(script_result(&mock, &job.success_codes)),
            None => Executor { background: false }.run_script(runs, run, job).await,
        }
    }

    async fn start_child(&self, runs: &Runs, run: &Run, job: &ChildJob) -> Result<(String, Event), Error> {
        let mock = match &run.open {
            Some(open) => self.mock(runs, run, &open.node_id).await?,
            None => None,
        };
        let Some(mock) = mock else { return Executor { background: false }.start_child(runs, run, job).await };
        let (status, output) = child_outcome(&mock);
        let error = (status != RunStatus::Completed).then(|| "mocked failure".to_owned());
        let child_run_id = job.child_run_id.clone();
        Ok((run.id.clone(), Event::ChildFinished { child_run_id, status, output, error, error_code: None }))
    }

    async fn call_models(&self, runs: &Runs, run: &Run, written: &RunRow, job: &ModelJob) -> Option<Event> {
        runs.call_models(run, Some(written), job).await
    }
}

/// How a paused test run continues.
#[allow(clippy::large_enum_variant, reason = "one value per pause, matched at once")]
enum Next {
    Answer(String, Answer),
    Missing(PendingStep),
}

impl Runs {
    /// `test_workflow`.
    pub async fn test_workflow(&self, scope: &Scope, request: TestRequest, actor: &Actor) -> Result<TestOutcome, Error> {
        let timeout = request.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if !(1..=MAX_TIMEOUT_MS).contains(&timeout) {
            return Ok(TestOutcome::failure("invalid_input", "`timeout_ms` must be between 1 and 600000"));
        }
        let mocks = match request.mocks.clone() {
            None => Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => return Ok(TestOutcome::failure("invalid_input", "`mocks` must be an object keyed by node id")),
        };
        let prepared = match self.test_subject(scope, &request, &mocks) {
            Ok(prepared) => prepared,
            Err(outcome) => return Ok(*outcome),
        };
        let unmocked_script =
            prepared.workflow.nodes.iter().any(|n| n.kind == NodeType::Script && !mocks.contains_key(&n.id));
        if unmocked_script && !actor.may_exec {
            let what = format!("workflow '{}'", prepared.workflow.id);
            return Ok(TestOutcome::failure("insufficient_scope", format!("{}, or mock them", actor.exec_refusal(&what))));
        }
        let starter = Starter { origin: "test".into(), name: Some(actor.name.clone()), exec_allowed: actor.may_exec };
        let row = match self.new_run_row(scope, &prepared, request.input.as_ref(), &starter, "test", None) {
            Ok(row) => row,
            Err(error) => return Ok(TestOutcome::failure(error.as_code(), error.to_string())),
        };
        let run_id = row.id.clone();
        self.insert(&row).await?;
        let started = Instant::now();
        let limit = Duration::from_millis(timeout);
        let deadline = now_ms() + timeout as i64;
        let driven = tokio::time::timeout(limit, DEADLINE.scope(deadline, self.drive_test(&run_id, &mocks))).await;
        let duration_ms = started.elapsed().as_millis() as u64;
        // Engine work stopped at the deadline ends the run before the timer is polled: a timeout all the same.
        let driven = if started.elapsed() >= limit { Err(()) } else { driven.map_err(|_| ()) };
        let mut outcome = match driven {
            Ok(Ok(None)) => TestOutcome { ok: true, ..TestOutcome::default() },
            Ok(Ok(Some(step))) => {
                let _ = self.cancel_tree(&mut Tree::unread(&run_id), Some("test stopped: missing mock".into())).await;
                TestOutcome {
                    node_id: Some(step.node_id.clone()),
                    node_type: Some(step.node_type.clone()),
                    ..TestOutcome::failure(
                        "missing_mock",
                        format!(
                            "the run reached {} node '{}' (visit {}) and `mocks` has no answer for it; add mocks[\"{}\"]",
                            step.node_type, step.node_id, step.iteration, step.node_id
                        ),
                    )
                }
            }
            Ok(Err(error)) => {
                let _ = self.cancel_tree(&mut Tree::unread(&run_id), Some("test stopped: runner error".into())).await;
                TestOutcome::failure("runner_error", error.to_string())
            }
            Err(_) => {
                let _ = self.cancel_tree(&mut Tree::unread(&run_id), Some(format!("test timed out after {timeout} ms"))).await;
                TestOutcome::failure("timeout", format!("the run did not finish within timeout_ms ({timeout} ms); it was cancelled"))
            }
        };
        let traced = self.trace(&run_id).await;
        let deleted = self.delete_tree(&run_id).await;
        let (root, trace) = traced?;
        deleted?;
        if outcome.ok {
            outcome.failure = RunFailure::of(&root.status, root.error, root.error_code, &trace);
        }
        outcome.final_status = Some(root.status);
        outcome.duration_ms = Some(duration_ms);
        outcome.node_trace = Some(trace);
        Ok(outcome)
    }

    /// Checks §14.2 in order and prepares the workflow; an early answer when a check fails.
    fn test_subject(
        &self,
        scope: &Scope,
        request: &TestRequest,
        mocks: &Map<String, Value>,
    ) -> Result<Prepared, Box<TestOutcome>> {
        let fail = |code: &str, message: String| Box::new(TestOutcome::failure(code, message));
        let (text, id, source, path, dir) = match (&request.id, &request.config, &request.yaml) {
            (Some(id), None, None) => {
                let located = Sources::new(self.home(), scope)
                    .resolve(id, request.source)
                    .map_err(|e| fail("workflow_not_found", e.to_string()))?;
                let text = located.read().map_err(|e| fail("invalid_config", e.to_string()));
                let dir = located.assets().display().to_string();
                (text, Some(id.clone()), located.source, located.path.display().to_string(), dir)
            }
            (None, Some(config), None) => {
                let text = serde_json::to_string(config).map_err(|e| fail("invalid_input", e.to_string()))?;
                (Ok(text), None, Source::Global, String::new(), self.home().join("workflows").display().to_string())
            }
            (None, None, Some(yaml)) => {
                (Ok(yaml.clone()), None, Source::Global, String::new(), self.home().join("workflows").display().to_string())
            }
            _ => return Err(fail("invalid_input", "pass exactly one of `id`, `config` or `yaml`".into())),
        };
        let doc = text.clone().ok().and_then(|t| cairn_yaml::parse(&t).ok());
        if !self.provider_for_default(scope, doc.as_ref()) {
            let Some(doc) = &doc else {
                return Err(fail(
                    "fanout_in_test_mode_unsupported",
                    "the workflow config cannot be read, so its fan-out nodes cannot be checked; fix the file".into(),
                ));
            };
            let nodes = doc.value.get("nodes").and_then(Value::as_object);
            for (node_id, node) in nodes.into_iter().flatten() {
                let kind = node.get("type").and_then(Value::as_str).and_then(NodeType::from_name);
                let nested = format!("{node_id}/");
                let mocked = mocks.contains_key(node_id)
                    || (kind == Some(NodeType::Subworkflow) && mocks.keys().any(|k| k.starts_with(&nested)));
                if let Some(kind) = kind.filter(|k| k.is_fanout())
                    && !mocked
                {
                    return Err(Box::new(TestOutcome {
                        node_id: Some(node_id.clone()),
                        node_type: Some(kind.as_str().to_owned()),
                        ..TestOutcome::failure(
                            "fanout_in_test_mode_unsupported",
                            format!(
                                "{} node '{node_id}' fans out to several agents; give it a mock (mocks[\"{node_id}\"]) to \
                                 test the workflow",
                                kind.as_str()
                            ),
                        )
                    }));
                }
            }
        }
        let text = text?;
        let workflow = definition::parse(&text, id.as_deref()).map_err(|diagnostics| {
            Box::new(TestOutcome {
                details: Some(diagnostics.iter().map(|d| d.to_string()).collect()),
                ..TestOutcome::failure("invalid_config", "the workflow is not valid; fix every entry of `details`")
            })
        })?;
        let config = doc.map(|d| d.value).unwrap_or(Value::Null);
        let dir = if request.id.is_some() { dir } else { format!("{dir}/{}", workflow.id) };
        Ok(Prepared {
            models: self.model_settings(scope),
            workflow: std::sync::Arc::new(workflow),
            config,
            source,
            path,
            dir,
            text_sha256: super::trigger_exec::text_sha256(&text),
        })
    }

    /// Whether a model provider serves the default model of the workflow `doc` (its `defaults.model`, else
    /// `roscoe.yaml`'s), so its unmocked fan-out nodes can run live.
    fn provider_for_default(&self, scope: &Scope, doc: Option<&cairn_yaml::Document>) -> bool {
        let models = self.model_settings(scope);
        let named = doc.and_then(|d| d.value.pointer("/defaults/model")).and_then(Value::as_str);
        let model = models.resolve(named.unwrap_or(&models.default));
        Settings::read(self.home(), scope.root()).is_ok_and(|settings| providers::serves(&settings, &model))
    }

    /// Drives a test run, answering each pause from `mocks` (or live); `Some(step)` when a step has no answer.
    async fn drive_test(&self, run_id: &str, mocks: &Map<String, Value>) -> Result<Option<PendingStep>, Error> {
        let mocked = Mocked { mocks };
        self.drive_with(run_id, Event::Start, &mocked, &mut Tree::unread(run_id)).await?;
        loop {
            let tree = self.tree(run_id).await?;
            let root = tree.iter().find(|r| r.id == run_id).ok_or_else(Error::run_not_found)?;
            if root.status != "paused" {
                return Ok(None);
            }
            let owner = view::deepest(&tree, run_id);
            if owner.pending_step.is_none() && self.skip_delay(owner, &mocked, run_id).await? {
                continue;
            }
            let Some(step) = owner.pending_step.as_deref().and_then(|p| serde_json::from_str::<PendingStep>(p).ok())
            else {
                return Err(Error::Internal(format!("run {} is paused without a pending step", owner.id)));
            };
            let key = format!("{}{}", self.mock_prefix(owner.parent_node_run_id.clone()).await?, step.node_id);
            match next(&step, mocks.get(&key)) {
                Next::Missing(step) => {
                    if !self.answer_live(owner, &step, &mocked).await? {
                        return Ok(Some(step));
                    }
                }
                Next::Answer(node_id, answer) => {
                    let event = Event::Answer { node_id: Some(node_id), answer };
                    if let Err(error) = self.drive_with(&owner.id, event, &mocked, &mut Tree::unread(run_id)).await {
                        return Err(Error::Internal(format!("the mock for '{key}' was refused: {error}")));
                    }
                }
            }
        }
    }

    /// When test run `owner` waits out a node's `delayMs`, ends the wait at once (a test does not keep time) and
    /// says so.
    async fn skip_delay(&self, owner: &RunRow, mocked: &Mocked<'_>, root_id: &str) -> Result<bool, Error> {
        let open = rows::open_node_run(&mut *self.inner.store.read().await?, &owner.id).await?;
        let Some(open) = open.filter(|open| open.phase.as_deref() == Some(DELAY_PHASE)) else { return Ok(false) };
        let event = Event::TimerFired { node_run_id: open.id };
        self.drive_with(&owner.id, event, mocked, &mut Tree::unread(root_id)).await?;
        Ok(true)
    }

    /// `<subworkflow node>/…/` of a run inside a test tree (empty for the root).
    async fn mock_prefix(&self, parent_node_run_id: Option<String>) -> Result<String, Error> {
        let mut prefix = String::new();
        let mut node_run = parent_node_run_id;
        let mut conn = self.inner.store.read().await?;
        while let Some(id) = node_run {
            let Some(node) = rows::get_node_run(&mut conn, &id).await? else { break };
            prefix = format!("{}/{prefix}", node.node_id);
            node_run = rows::get_run(&mut conn, &node.run_id).await?.and_then(|r| r.parent_node_run_id);
        }
        Ok(prefix)
    }

    async fn tree(&self, root_id: &str) -> Result<Vec<rows::RunRow>, Error> {
        let mut conn = self.inner.store.read().await?;
        Ok(rows::runs_in_tree(&mut conn, root_id).await?)
    }

    /// The root run and its node trace, child runs inlined under their subworkflow node.
    async fn trace(&self, root_id: &str) -> Result<(rows::RunRow, Vec<Value>), Error> {
        let tree = self.tree(root_id).await?;
        let root = tree.iter().find(|r| r.id == root_id).cloned();
        let root = root.ok_or_else(|| Error::Internal(format!("test run {root_id} vanished before its trace")))?;
        let mut conn = self.inner.store.read().await?;
        let mut traces = Map::new();
        for run in &tree {
            let nodes = rows::node_runs(&mut conn, &run.id).await?;
            traces.insert(run.id.clone(), Value::Array(view::node_values(&nodes)));
        }
        fn inline(nodes: &mut Value, traces: &Map<String, Value>) {
            for node in nodes.as_array_mut().into_iter().flatten() {
                if let Some(child) = node["childRunId"].as_str().and_then(|id| traces.get(id)) {
                    let mut child = child.clone();
                    inline(&mut child, traces);
                    node["children"] = child;
                }
            }
        }
        let mut nodes = traces.get(root_id).cloned().unwrap_or(json!([]));
        inline(&mut nodes, &traces);
        Ok((root, nodes.as_array().cloned().unwrap_or_default()))
    }

    async fn delete_tree(&self, root_id: &str) -> Result<(), Error> {
        let mut tx = rows::begin(&self.inner.store).await?;
        rows::delete_run_tree(&mut tx, root_id).await?;
        rows::commit(tx).await?;
        Ok(())
    }
}

/// The mock for visit `iteration`: a list gives element `iteration - 1`, anything else answers every visit.
fn for_visit(mock: Option<&Value>, iteration: u32) -> Option<&Value> {
    match mock? {
        Value::Array(list) => list.get(iteration.saturating_sub(1) as usize),
        other => Some(other),
    }
}

fn text(value: &Value) -> String {
    value.as_str().map(str::to_owned).unwrap_or_else(|| value.to_string())
}

fn strings(value: &Value) -> Option<Vec<String>> {
    value.as_array().map(|list| list.iter().map(text).collect())
}

/// The answer a mock gives to a pending step.
fn next(step: &PendingStep, mock: Option<&Value>) -> Next {
    let missing = || Next::Missing(step.clone());
    // Fan-out mocks are one object for the whole visit, so a list is read per visit only for single-step nodes.
    let Some(mock) = for_visit(mock, step.iteration) else { return missing() };
    let node = step.node_id.clone();
    let answer = match step.node_type.as_str() {
        "ai_agent" => match mock {
            Value::Object(m) => Answer::Response {
                response: m.get("response").map(text).unwrap_or_default(),
                failed: m.get("failed").and_then(Value::as_bool).unwrap_or(false),
            },
            other => Answer::Response { response: text(other), failed: false },
        },
        "ai_judge" => match mock {
            Value::Object(m) if m.contains_key("verdict") => Answer::Response {
                response: json!({ "reasoning": m.get("reasoning").cloned().unwrap_or(json!("mocked")), "verdict": m["verdict"] })
                    .to_string(),
                failed: false,
            },
            other => Answer::Response { response: text(other), failed: false },
        },
        "human" => match mock {
            Value::Object(m) => Answer::Human {
                transition: m.get("transition").map(text).unwrap_or_default(),
                comment: m.get("comment").map(text),
                decided_by: "test".into(),
                principal: "test mock".into(),
            },
            other => Answer::Human {
                transition: text(other),
                comment: None,
                decided_by: "test".into(),
                principal: "test mock".into(),
            },
        },
        "consensus" => {
            let responses = match step.consensus_phase.as_deref() {
                Some("aggregate") => mock.get("aggregate").map(|a| vec![text(a)]),
                Some("retry") => {
                    let round = step.attempt.saturating_sub(1) as usize;
                    mock.get("retry").and_then(|r| r.get(round)).and_then(strings)
                }
                _ => mock.get("responses").and_then(strings),
            };
            match responses {
                Some(responses) => Answer::Consensus { responses },
                None => return missing(),
            }
        }
        "round_robin" => match step.round_robin_phase.as_deref() {
            Some("resolve") => match mock.get("result") {
                Some(result) => Answer::RoundRobin { verdicts: None, result: Some(text(result)) },
                None => return missing(),
            },
            _ => {
                let verdicts = match (mock.get("verdicts").and_then(Value::as_object), mock.get("winner")) {
                    (Some(verdicts), _) => verdicts.clone(),
                    (None, Some(winner)) => shortcut(step, winner),
                    (None, None) => return missing(),
                };
                Answer::RoundRobin { verdicts: Some(verdicts), result: None }
            }
        },
        "map" => {
            let responses = match step.map_phase.as_deref() {
                Some("extract") => mock.get("extract").map(|e| vec![text(e)]),
                Some("reduce") => mock.get("reduce").map(|r| vec![text(r)]),
                _ => mock.get("responses").and_then(strings),
            };
            match responses {
                Some(responses) => Answer::Map { responses },
                None => return missing(),
            }
        }
        _ => return missing(),
    };
    Next::Answer(node, answer)
}

/// Verdicts that make `winner` (a candidate or its 0-based index) win every matchup it plays.
fn shortcut(step: &PendingStep, winner: &Value) -> Map<String, Value> {
    let matchups = step.matchups.clone().unwrap_or_default();
    let name = match winner {
        Value::Number(n) => {
            let mut seen: Vec<String> = Vec::new();
            for m in &matchups {
                for c in [&m.a, &m.b] {
                    if !seen.contains(c) {
                        seen.push(c.clone());
                    }
                }
            }
            seen.get(n.as_u64().unwrap_or(0) as usize).cloned().unwrap_or_default()
        }
        other => text(other),
    };
    matchups
        .iter()
        .map(|m| {
            let side = if m.b == name { "B" } else { "A" };
            let margin = if m.a == name || m.b == name { 100 } else { 50 };
            (m.id.clone(), json!({ "winner": side, "margin": margin, "reasoning": "mocked" }))
        })
        .collect()
}

/// A script mock as the script's result.
fn script_result(mock: &Value, success_codes: &[i32]) -> ScriptResult {
    let code = mock.get("exitCode").and_then(Value::as_i64).unwrap_or(0) as i32;
    ScriptResult {
        exit_code: Some(code),
        stdout: mock.get("stdout").map(text).unwrap_or_default(),
        stderr: mock.get("stderr").map(text).unwrap_or_default(),
        success: success_codes.contains(&code),
        attempts: 1,
        ..ScriptResult::default()
    }
}

/// A subworkflow mock (`{ status, output }`) as the child's outcome.
fn child_outcome(mock: &Value) -> (RunStatus, Option<Value>) {
    let status = match mock.get("status").and_then(Value::as_str) {
        Some("failed") => RunStatus::Failed,
        _ => RunStatus::Completed,
    };
    (status, mock.get("output").cloned())
}
