//! The run engine (§8): a pure function from a run and an [`Event`] to the run's next state and the [`Effect`]s to
//! carry out.
//!
//! [`apply`] drives a run as far as it can without the outside world: it routes transitions, counts visits and
//! steps, evaluates conditions, renders templates from completed outputs, builds the pending step of a handback node,
//! and stops when the run pauses, finishes, or needs something done — a script run ([`Effect::RunScript`]), a child
//! run started ([`Effect::StartChild`]), a parent told its child finished ([`Effect::NotifyParent`]), a process
//! killed ([`Effect::Kill`]). The run service loads the run, calls [`apply`], stores the result in one transaction and
//! carries out the effects, feeding their results back as new events. Nothing here touches a database, a file or a
//! process, so every rule is tested with plain values.
//!
//! A rejected event (a stale answer, the wrong tool, an invalid transition) is an `Err(`[`Rejection`]`)` and leaves
//! the run exactly as it was. An answer that is recorded but not accepted (an invalid judge envelope counts an
//! attempt) comes back as [`Outcome::notice`].

#![allow(
    clippy::result_large_err,
    clippy::large_enum_variant,
    reason = "a finished step is handed straight back to its one caller; boxing it would buy nothing"
)]

mod condition;
mod consensus;
mod envelope;
mod handback;
mod inputs;
mod map;
mod render;
mod round_robin;
mod script;
pub mod state;

use serde_json::{Map, Value, json};

use crate::definition::{Node, NodeType, Target};

pub use inputs::validate_inputs;
pub use script::{Program, RetryPolicy, ScriptJob, ScriptResult};
pub use state::{
    AgentSpec, Context, Cost, Matchup, ModelSettings, NodeRun, NodeStatus, PendingStep, Price, Run,
    RunStatus, TransitionInfo,
};

/// The hard cap on node executions per run (§4.3).
pub const MAX_STEPS: u32 = 1000;

/// The deepest a subworkflow tree may nest (§7.9).
pub const MAX_DEPTH: u32 = 5;

/// Something that happened to a run.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// The run was just created: start at `initial`.
    Start,
    /// The host answered the pending step. `node_id`, when given, must name the pending node (else `stale_step`).
    Answer {
        /// The node the answer is for.
        node_id: Option<String>,
        /// The answer.
        answer: Answer,
    },
    /// The script of node run `node_run_id` was started as process group `pid`.
    ScriptStarted {
        /// The node run.
        node_run_id: String,
        /// The process (group) id.
        pid: u32,
    },
    /// The script of node run `node_run_id` finished.
    ScriptFinished {
        /// The node run.
        node_run_id: String,
        /// What happened.
        result: ScriptResult,
    },
    /// The child run this run waits for reached a terminal state (or could not be started).
    ChildFinished {
        /// The child run.
        child_run_id: String,
        /// Its final status.
        status: RunStatus,
        /// Its output.
        output: Option<Value>,
        /// Its error.
        error: Option<String>,
        /// Its error code.
        error_code: Option<String>,
    },
    /// `cancel_run` (or a test timeout).
    Cancel {
        /// Why.
        reason: Option<String>,
    },
    /// `retry_run`: re-drive a failed or cancelled run from the node it stopped at.
    Retry,
    /// The process executing the run's synchronous node is gone.
    RunnerLost,
    /// Nobody answered the pending step of node run `node_run_id` within its node's `timeoutMs` (human nodes): the
    /// node takes its `timeout` transition.
    StepTimedOut {
        /// The paused node run.
        node_run_id: String,
    },
}

/// The host's answer to a pending step; the variant is the tool that sent it.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// `advance_run`: ai_agent / ai_judge.
    Response {
        /// The raw response.
        response: String,
        /// The host could not do the task.
        failed: bool,
    },
    /// `resume_run`: a human's choice.
    Human {
        /// The chosen transition (name, any case, or its 1-based number).
        transition: String,
        /// Optional comment.
        comment: Option<String>,
        /// `mcp`, `web` or `cli`.
        decided_by: String,
        /// Who decided: `Ada (person)`.
        principal: String,
    },
    /// `advance_consensus`.
    Consensus {
        /// Raw responses in agent order.
        responses: Vec<String>,
    },
    /// `advance_round_robin`.
    RoundRobin {
        /// Verdicts by matchup id.
        verdicts: Option<Map<String, Value>>,
        /// The resolve phase's text.
        result: Option<String>,
    },
    /// `advance_map`.
    Map {
        /// Raw responses in agent order.
        responses: Vec<String>,
    },
}

impl Answer {
    /// The tool that sends this answer.
    pub fn tool(&self) -> &'static str {
        match self {
            Answer::Response { .. } => "advance_run",
            Answer::Human { .. } => "resume_run",
            Answer::Consensus { .. } => "advance_consensus",
            Answer::RoundRobin { .. } => "advance_round_robin",
            Answer::Map { .. } => "advance_map",
        }
    }
}

/// The tool that answers a pending step of `node_type`.
pub fn tool_for(node_type: &str) -> &'static str {
    match node_type {
        "human" => "resume_run",
        "consensus" => "advance_consensus",
        "round_robin" => "advance_round_robin",
        "map" => "advance_map",
        _ => "advance_run",
    }
}

/// Work the run service must do for the engine.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Run a script, then apply [`Event::ScriptFinished`].
    RunScript(ScriptJob),
    /// Create and drive a child run, then (if it finishes) apply [`Event::ChildFinished`] here.
    StartChild(ChildJob),
    /// This run finished: apply [`Event::ChildFinished`] to its parent.
    NotifyParent {
        /// The parent run.
        parent_run_id: String,
    },
    /// Kill a running script's process group.
    Kill {
        /// The process group.
        pid: u32,
    },
}

/// A child run to start for a subworkflow node.
#[derive(Clone, Debug, PartialEq)]
pub struct ChildJob {
    /// The id the child run must get.
    pub child_run_id: String,
    /// The parent's subworkflow node run.
    pub node_run_id: String,
    /// The child workflow's id.
    pub workflow: String,
    /// Its source, when pinned.
    pub source: Option<String>,
    /// Rendered inputs.
    pub inputs: Map<String, Value>,
}

/// Why an event was refused; the run is unchanged.
#[derive(Clone, Debug, PartialEq)]
pub struct Rejection {
    /// Stable code (§19: `stale_step`, `wrong_tool`, `terminal`, …).
    pub code: &'static str,
    /// What happened and what to do.
    pub message: String,
    /// Extra fields for the error body (e.g. `validTransitions`, `rejected`).
    pub extra: Map<String, Value>,
}

impl Rejection {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        Rejection {
            code,
            message: message.into(),
            extra: Map::new(),
        }
    }

    fn with(mut self, key: &str, value: Value) -> Self {
        self.extra.insert(key.to_owned(), value);
        self
    }
}

/// The result of [`apply`].
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The run's new state.
    pub run: Run,
    /// Node runs created or changed (besides `run.open`), to store.
    pub records: Vec<NodeRun>,
    /// Work to carry out, in order.
    pub effects: Vec<Effect>,
    /// A problem with the answer that was nevertheless recorded (e.g. `invalid_response`, with the attempt counted).
    pub notice: Option<Rejection>,
}

/// Where the engine gets the time and fresh ids (the only inputs that are not the run and the event).
pub trait Env {
    /// Now, in epoch milliseconds.
    fn now(&self) -> i64;
    /// A fresh lower-case alphanumeric id.
    fn new_id(&mut self) -> String;
}

/// Applies `event` to `run`.
pub fn apply(run: &Run, event: Event, env: &mut dyn Env) -> Result<Outcome, Rejection> {
    let mut engine = Engine {
        run: run.clone(),
        records: Vec::new(),
        effects: Vec::new(),
        notice: None,
        env,
    };
    engine.handle(event)?;
    Ok(Outcome {
        run: engine.run,
        records: engine.records,
        effects: engine.effects,
        notice: engine.notice,
    })
}

/// What a finished node reports.
struct Finish {
    status: NodeStatus,
    output: Value,
    event: String,
    error: Option<String>,
    error_code: Option<&'static str>,
}

impl Finish {
    fn ok(output: Value, event: impl Into<String>) -> Self {
        Finish {
            status: RunStatus::Completed,
            output,
            event: event.into(),
            error: None,
            error_code: None,
        }
    }

    fn failed(output: Value, error: impl Into<String>, code: Option<&'static str>) -> Self {
        Finish {
            status: RunStatus::Failed,
            output,
            event: "failure".into(),
            error: Some(error.into()),
            error_code: code,
        }
    }
}

/// What entering a node or answering a phase leads to.
enum Step {
    /// The node finished.
    Done(Finish),
    /// The node hands this step to the host.
    Pause(PendingStep),
    /// The node waits for an effect (script, child run).
    Wait,
}

struct Engine<'e> {
    run: Run,
    records: Vec<NodeRun>,
    effects: Vec<Effect>,
    notice: Option<Rejection>,
    env: &'e mut dyn Env,
}

impl Engine<'_> {
    fn handle(&mut self, event: Event) -> Result<(), Rejection> {
        match event {
            Event::Start => {
                if self.run.status != RunStatus::Running || self.run.context.steps > 0 {
                    return Err(Rejection::new(
                        "invalid_input",
                        "the run has already started",
                    ));
                }
                self.run.current_node = Some(self.run.workflow.initial.clone());
                self.drive();
            }
            Event::Answer { node_id, answer } => self.answer(node_id, answer)?,
            Event::ScriptStarted { node_run_id, pid } => {
                let open = self.open_running(&node_run_id)?;
                open.phase_state = json!({ "pid": pid });
            }
            Event::ScriptFinished {
                node_run_id,
                result,
            } => {
                let open = self.open_running(&node_run_id)?;
                open.attempts = result.attempts;
                let finish = script::finish(result);
                self.finish_open(finish);
                self.drive();
            }
            Event::ChildFinished {
                child_run_id,
                status,
                output,
                error,
                error_code,
            } => {
                if self.run.status != RunStatus::Paused
                    || self.run.awaiting_child.as_deref() != Some(child_run_id.as_str())
                {
                    return Err(Rejection::new(
                        "stale_step",
                        format!(
                            "run {} is not waiting for child run {child_run_id}",
                            self.run.id
                        ),
                    ));
                }
                let summary = json!({ "childRunId": child_run_id, "status": status.as_str(), "output": output });
                let finish = if status == RunStatus::Completed {
                    Finish::ok(summary, "success")
                } else {
                    let code = error_code.as_deref().and_then(known_code);
                    let message = error.unwrap_or_else(|| format!("the child run {}", status.as_str()));
                    Finish::failed(summary, format!("subworkflow: {message}"), code)
                };
                self.finish_open(finish);
                self.drive();
            }
            Event::StepTimedOut { node_run_id } => {
                let waiting = self.run.open.as_ref().is_some_and(|open| {
                    open.id == node_run_id && self.run.status == RunStatus::Paused
                });
                if !waiting {
                    return Err(Rejection::new(
                        "stale_step",
                        format!("node run {node_run_id} is no longer waiting"),
                    ));
                }
                self.finish_open(Finish::ok(json!({ "timedOut": true }), "timeout"));
                self.drive();
            }
            Event::Cancel { reason } => self.cancel(reason)?,
            Event::Retry => self.retry()?,
            Event::RunnerLost => {
                if self.run.status != RunStatus::Running {
                    return Err(Rejection::new("not_running", "the run is not running"));
                }
                if let Some(open) = self.run.open.as_mut() {
                    open.status = RunStatus::Failed;
                    open.error = Some("the process running this node stopped".into());
                    open.completed_at = Some(self.env.now());
                }
                let open = self.run.open.take();
                self.records.extend(open);
                self.fail_run(
                    "runner_lost",
                    "the server process executing this run stopped before the node finished; the node was not \
                     re-executed. Call retry_run to run it again",
                );
            }
        }
        Ok(())
    }

    /// The open node run, which must be `node_run_id` and running.
    fn open_running(&mut self, node_run_id: &str) -> Result<&mut NodeRun, Rejection> {
        match self.run.open.as_mut() {
            Some(open)
                if open.id == node_run_id
                    && open.status == RunStatus::Running
                    && self.run.status == RunStatus::Running =>
            {
                Ok(open)
            }
            _ => Err(Rejection::new(
                "stale_step",
                format!("node run {node_run_id} is no longer running"),
            )),
        }
    }

    fn answer(&mut self, node_id: Option<String>, answer: Answer) -> Result<(), Rejection> {
        let pending = self.run.pending.clone();
        if let Some(node_id) = &node_id {
            let current = pending.as_ref().map(|p| p.node_id.as_str());
            if current != Some(node_id.as_str()) || self.run.status != RunStatus::Paused {
                let now = match (&current, self.run.status) {
                    (Some(id), _) => format!("the run is now paused at '{id}'"),
                    (None, status) => format!("the run is now {}", status.as_str()),
                };
                return Err(Rejection::new(
                    "stale_step",
                    format!(
                        "the step for node '{node_id}' is no longer pending ({now}); call get_run_status for the \
                         current step"
                    ),
                ));
            }
        }
        if self.run.status.is_terminal() {
            return Err(Rejection::new(
                "terminal",
                format!("Run is {}.", self.run.status.as_str()),
            ));
        }
        let Some(pending) = pending.filter(|_| self.run.status == RunStatus::Paused) else {
            return Err(Rejection::new(
                "not_paused",
                format!(
                    "run {} has no pending step (it is {}); call get_run_status",
                    self.run.id,
                    self.run.status.as_str()
                ),
            ));
        };
        let right = tool_for(&pending.node_type);
        if right != answer.tool() {
            let extra = if pending.node_type == "human" {
                " A human step must be shown to the user and answered only with their choice."
            } else {
                ""
            };
            return Err(Rejection::new(
                "wrong_tool",
                format!(
                    "the pending step '{}' is a {} step: answer it with {right}, not {}.{extra}",
                    pending.node_id,
                    pending.node_type,
                    answer.tool()
                ),
            )
            .with("expectedTool", json!(right)));
        }
        let workflow = self.run.workflow.clone();
        let node = workflow
            .node(&pending.node_id)
            .expect("a pending step names a node of the snapshot");
        let step = self.submit(node, &pending, answer)?;
        self.settle(step);
        self.drive();
        Ok(())
    }

    /// Feeds an answer to the executor of `node`.
    fn submit(
        &mut self,
        node: &Node,
        pending: &PendingStep,
        answer: Answer,
    ) -> Result<Step, Rejection> {
        match (node.kind, answer) {
            (NodeType::AiAgent, Answer::Response { response, failed }) => {
                Ok(handback::agent_answer(self, pending, response, failed))
            }
            (NodeType::AiJudge, Answer::Response { response, .. }) => {
                Ok(handback::judge_answer(self, node, pending, response))
            }
            (
                NodeType::Human,
                Answer::Human {
                    transition,
                    comment,
                    decided_by,
                    principal,
                },
            ) => handback::human_answer(node, pending, transition, comment, decided_by, principal),
            (NodeType::Consensus, Answer::Consensus { responses }) => {
                consensus::answer(self, node, pending, responses)
            }
            (NodeType::RoundRobin, Answer::RoundRobin { verdicts, result }) => {
                round_robin::answer(self, node, pending, verdicts, result)
            }
            (NodeType::Map, Answer::Map { responses }) => map::answer(self, node, pending, responses),
            (kind, answer) => Err(Rejection::new(
                "wrong_tool",
                format!(
                    "node '{}' is a {} node; {} cannot answer it",
                    node.id,
                    kind.as_str(),
                    answer.tool()
                ),
            )),
        }
    }

    /// Applies what an executor decided: pause (again), wait, or finish the open node run.
    fn settle(&mut self, step: Step) {
        match step {
            Step::Done(finish) => self.finish_open(finish),
            Step::Pause(pending) => {
                if let Some(open) = self.run.open.as_mut() {
                    open.status = RunStatus::Paused;
                }
                self.run.status = RunStatus::Paused;
                self.run.pending = Some(pending);
            }
            Step::Wait => {}
        }
    }

    /// Runs nodes until the run pauses, finishes or waits for an effect.
    fn drive(&mut self) {
        while self.run.status == RunStatus::Running && self.run.open.is_none() {
            let workflow = self.run.workflow.clone();
            let Some(node) = self
                .run
                .current_node
                .as_deref()
                .and_then(|id| workflow.node(id))
            else {
                self.fail_run("no_transition", "the run has no current node");
                return;
            };
            self.run.context.steps += 1;
            if self.run.context.steps > MAX_STEPS {
                self.fail_run(
                    "max_steps_exceeded",
                    format!(
                        "the run executed {MAX_STEPS} nodes without finishing (safety cap); check the workflow for \
                         a loop without maxIterations"
                    ),
                );
                return;
            }
            let visits = self
                .run
                .context
                .iterations
                .get(&node.id)
                .copied()
                .unwrap_or(0);
            if let Some(max) = node.max_iterations.filter(|max| visits >= *max) {
                let mut skip = self.node_run(node, visits);
                skip.status = RunStatus::Completed;
                skip.event = Some("max_iterations".into());
                skip.output = Some(json!({ "skipped": "max_iterations", "iterations": max }));
                skip.completed_at = Some(self.env.now());
                self.records.push(skip);
                match node.target("max_iterations") {
                    Some(target) => {
                        let target = target.clone();
                        self.go(node, &target, None);
                    }
                    None => self.fail_run(
                        "max_iterations_exceeded",
                        format!(
                            "node '{}' reached its maxIterations ({max}) and has no max_iterations transition",
                            node.id
                        ),
                    ),
                }
                continue;
            }
            self.run
                .context
                .iterations
                .insert(node.id.clone(), visits + 1);
            let open = self.node_run(node, visits + 1);
            self.run.open = Some(open);
            let step = self.enter(node);
            self.settle(step);
        }
    }

    /// Starts executing `node` (the open node run is already there).
    fn enter(&mut self, node: &Node) -> Step {
        match node.kind {
            NodeType::Condition => Step::Done(condition::evaluate(self, node)),
            NodeType::Script => match script::job(self, node) {
                Ok(job) => {
                    if let Some(open) = self.run.open.as_mut() {
                        open.input = Some(job.describe());
                    }
                    self.effects.push(Effect::RunScript(job));
                    Step::Wait
                }
                Err(finish) => Step::Done(finish),
            },
            NodeType::AiAgent => handback::agent_enter(self, node),
            NodeType::AiJudge => handback::judge_enter(self, node),
            NodeType::Human => handback::human_enter(self, node),
            NodeType::Consensus => consensus::enter(self, node),
            NodeType::RoundRobin => round_robin::enter(self, node),
            NodeType::Map => map::enter(self, node),
            NodeType::Subworkflow => self.enter_subworkflow(node),
        }
    }

    fn enter_subworkflow(&mut self, node: &Node) -> Step {
        if self.run.depth + 1 > MAX_DEPTH {
            return Step::Done(Finish::failed(
                Value::Null,
                format!("subworkflows nest at most {MAX_DEPTH} deep"),
                Some("subworkflow_depth_exceeded"),
            ));
        }
        let mut inputs = Map::new();
        if let Some(Value::Object(given)) = node.config.get("inputs") {
            for (name, value) in given {
                match render::value(self, value) {
                    Ok(value) => {
                        inputs.insert(name.clone(), value);
                    }
                    Err(finish) => return Step::Done(finish),
                }
            }
        }
        let child_run_id = self.env.new_id();
        let open = self.run.open.as_mut().expect("entering a node opens it");
        open.child_run_id = Some(child_run_id.clone());
        open.status = RunStatus::Paused;
        open.input = Some(json!({ "workflow": node.config_str("workflow"), "inputs": inputs }));
        let job = ChildJob {
            child_run_id: child_run_id.clone(),
            node_run_id: open.id.clone(),
            workflow: node.config_str("workflow").unwrap_or_default().to_owned(),
            source: node.config_str("source").map(str::to_owned),
            inputs,
        };
        self.run.status = RunStatus::Paused;
        self.run.awaiting_child = Some(child_run_id);
        self.effects.push(Effect::StartChild(job));
        Step::Wait
    }

    /// A new node run of `node` (visit `iteration`), running.
    fn node_run(&mut self, node: &Node, iteration: u32) -> NodeRun {
        self.run.context.seq += 1;
        NodeRun {
            id: self.env.new_id(),
            parent: None,
            seq: self.run.context.seq,
            node_id: node.id.clone(),
            node_type: node.kind.as_str().to_owned(),
            status: RunStatus::Running,
            iteration,
            attempts: 0,
            phase: None,
            phase_state: Value::Null,
            model: None,
            input: None,
            output: None,
            error: None,
            event: None,
            warnings: Vec::new(),
            child_run_id: None,
            started_at: self.env.now(),
            completed_at: None,
            cost: Cost::default(),
        }
    }

    /// A finished child node run (an agent, matchup, branch …) of the open node run.
    fn child_record(
        &mut self,
        kind: &str,
        status: NodeStatus,
        input: Value,
        output: Value,
        error: Option<String>,
    ) -> NodeRun {
        let open = self.run.open.as_ref().expect("children belong to an open node run");
        let (parent, node_id, iteration) = (open.id.clone(), open.node_id.clone(), open.iteration);
        self.run.context.seq += 1;
        let now = self.env.now();
        NodeRun {
            id: self.env.new_id(),
            parent: Some(parent),
            seq: self.run.context.seq,
            node_id,
            node_type: kind.to_owned(),
            status,
            iteration,
            attempts: 1,
            phase: None,
            phase_state: Value::Null,
            model: None,
            input: Some(input),
            output: Some(output),
            error,
            event: None,
            warnings: Vec::new(),
            child_run_id: None,
            started_at: now,
            completed_at: Some(now),
            cost: Cost::default(),
        }
    }

    /// Records the host's work on the open node run: tokens estimated from text length, priced by `model`.
    fn charge(&mut self, model: &str, prompt: &str, response: &str) {
        let input = prompt.chars().count().div_ceil(4) as i64;
        let output = response.chars().count().div_ceil(4) as i64;
        let price = self.run.models.pricing.get(model).copied().unwrap_or_default();
        let cost = Cost {
            metered_usd: 0.0,
            subscription_usd: (input as f64 * price.input + output as f64 * price.output) / 1e6,
            input_tokens: input,
            output_tokens: output,
        };
        self.run.cost.add(cost);
        if let Some(open) = self.run.open.as_mut() {
            open.cost.add(cost);
        }
    }

    /// Finishes the open node run and follows its event.
    fn finish_open(&mut self, finish: Finish) {
        let workflow = self.run.workflow.clone();
        let mut open = self.run.open.take().expect("finishing needs an open node run");
        let node = workflow
            .node(&open.node_id)
            .expect("node runs name nodes of the snapshot");
        open.status = finish.status;
        open.output = Some(finish.output.clone());
        open.event = Some(finish.event.clone());
        open.error = finish.error.clone();
        open.completed_at = Some(self.env.now());
        self.run
            .context
            .nodes
            .insert(open.node_id.clone(), finish.output);
        self.records.push(open);
        self.run.pending = None;
        self.run.awaiting_child = None;
        if self.run.status == RunStatus::Paused {
            self.run.status = RunStatus::Running;
        }
        let failed = finish.status == RunStatus::Failed;
        match node.target(&finish.event) {
            Some(target) => {
                let target = target.clone();
                self.go(node, &target, finish.error.as_deref());
            }
            None if node.is_sink() && !failed => self.complete_run(),
            None if failed || node.is_sink() => {
                let message = finish
                    .error
                    .unwrap_or_else(|| format!("node '{}' failed", node.id));
                self.fail_run(
                    finish.error_code.unwrap_or("node_failed"),
                    format!("node '{}' failed: {message}", node.id),
                );
            }
            None => self.fail_run(
                "no_transition",
                format!(
                    "no_transition: node '{}' emitted '{}', which has no transition",
                    node.id, finish.event
                ),
            ),
        }
    }

    /// Follows a transition of `node` to `target`.
    fn go(&mut self, node: &Node, target: &Target, error: Option<&str>) {
        match target {
            Target::Node(id) => self.run.current_node = Some(id.clone()),
            Target::End => self.complete_run(),
            Target::Fail => {
                let reason = error.map(str::to_owned).unwrap_or_else(|| {
                    let output = self.run.context.nodes.get(&node.id);
                    let text = output
                        .and_then(|o| o.get("text").or_else(|| o.get("reasoning")))
                        .and_then(Value::as_str);
                    text.map(str::to_owned)
                        .unwrap_or_else(|| format!("node '{}' routed to $fail", node.id))
                });
                self.fail_run("routed_to_fail", reason);
            }
        }
    }

    fn complete_run(&mut self) {
        let workflow = self.run.workflow.clone();
        let output = if workflow.outputs.is_empty() {
            self.run
                .current_node
                .as_ref()
                .and_then(|id| self.run.context.nodes.get(id))
                .cloned()
                .unwrap_or(Value::Null)
        } else {
            let mut outputs = Map::new();
            for (name, template) in &workflow.outputs {
                let value = render::value(self, template).unwrap_or(Value::Null);
                outputs.insert(name.clone(), value);
            }
            Value::Object(outputs)
        };
        self.run.output = Some(output);
        self.end(RunStatus::Completed);
    }

    fn fail_run(&mut self, code: &str, message: impl Into<String>) {
        if let Some(mut open) = self.run.open.take() {
            open.status = RunStatus::Failed;
            open.completed_at = Some(self.env.now());
            self.records.push(open);
        }
        self.run.error = Some(message.into());
        self.run.error_code = Some(code.to_owned());
        self.end(RunStatus::Failed);
    }

    fn end(&mut self, status: RunStatus) {
        self.run.status = status;
        self.run.pending = None;
        self.run.awaiting_child = None;
        self.run.completed_at = Some(self.env.now());
        if let Some(parent_run_id) = self.run.parent_run_id.clone() {
            self.effects.push(Effect::NotifyParent { parent_run_id });
        }
    }

    fn cancel(&mut self, reason: Option<String>) -> Result<(), Rejection> {
        if self.run.status.is_terminal() {
            return Err(Rejection::new(
                "terminal",
                format!("Run is already {}.", self.run.status.as_str()),
            ));
        }
        if let Some(mut open) = self.run.open.take() {
            if let Some(pid) = open.phase_state.get("pid").and_then(Value::as_u64) {
                self.effects.push(Effect::Kill { pid: pid as u32 });
            }
            open.status = RunStatus::Cancelled;
            open.completed_at = Some(self.env.now());
            open.error = Some("cancelled".into());
            self.records.push(open);
        }
        self.run.error = Some(reason.unwrap_or_else(|| "Cancelled by user".into()));
        self.run.error_code = Some("cancelled".into());
        self.run.status = RunStatus::Cancelled;
        self.run.pending = None;
        self.run.awaiting_child = None;
        self.run.completed_at = Some(self.env.now());
        Ok(())
    }

    fn retry(&mut self) -> Result<(), Rejection> {
        if !matches!(self.run.status, RunStatus::Failed | RunStatus::Cancelled) {
            return Err(Rejection::new(
                "not_retryable",
                format!(
                    "Run is {}; only a failed or cancelled run can be retried.",
                    self.run.status.as_str()
                ),
            ));
        }
        if let Some(parent) = &self.run.parent_run_id {
            return Err(Rejection::new(
                "not_retryable",
                format!(
                    "run {} is a subworkflow child; retry its root run {} instead",
                    self.run.id, self.run.root_run_id
                ),
            )
            .with("parentRunId", json!(parent)));
        }
        let node = self
            .run
            .current_node
            .clone()
            .unwrap_or_else(|| self.run.workflow.initial.clone());
        if let Some(visits) = self.run.context.iterations.get_mut(&node) {
            *visits = visits.saturating_sub(1);
        }
        self.run.current_node = Some(node);
        self.run.context.steps = 0;
        self.run.status = RunStatus::Running;
        self.run.error = None;
        self.run.error_code = None;
        self.run.output = None;
        self.run.completed_at = None;
        self.run.attempt += 1;
        self.drive();
        Ok(())
    }

    /// A pending step for `node` with the common fields filled in.
    fn pending(&self, node: &Node, prompt: String, valid: Vec<String>) -> PendingStep {
        let open = self.run.open.as_ref().expect("a pending step belongs to an open node run");
        PendingStep {
            run_id: self.run.id.clone(),
            node_id: node.id.clone(),
            node_type: node.kind.as_str().to_owned(),
            prompt,
            valid_transitions: valid,
            label: node.label.clone(),
            transitions: node
                .transitions
                .iter()
                .map(|t| TransitionInfo {
                    event: t.event.clone(),
                    target: t.target.as_str().to_owned(),
                    target_label: match &t.target {
                        Target::Node(id) => {
                            self.run.workflow.node(id).and_then(|n| n.label.clone())
                        }
                        _ => None,
                    },
                })
                .collect(),
            agent_count: None,
            model: None,
            agents: None,
            consensus_phase: None,
            criterion: None,
            matchups: None,
            round_robin_phase: None,
            map_phase: None,
            iteration: open.iteration,
            attempt: open.attempts,
            workflow_id: self.run.workflow.id.clone(),
        }
    }
}

/// The run-failure codes a child's code may carry up to its parent.
fn known_code(code: &str) -> Option<&'static str> {
    [
        "workflow_not_found",
        "subworkflow_depth_exceeded",
        "invalid_input",
        "cancelled",
        "runner_lost",
    ]
    .into_iter()
    .find(|c| *c == code)
}

#[cfg(test)]
mod tests;
