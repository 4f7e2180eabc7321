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
//!
//! This file holds [`apply`], the public types and the helpers every executor uses (the pending step, the charge for
//! the host's work, the records of agents' answers); `machine.rs` moves a run through its nodes (visits, transitions,
//! caps), `lifecycle.rs` starts, finishes, cancels, retries and fails it, and each executor family has its own file.

#![allow(
    clippy::result_large_err,
    clippy::large_enum_variant,
    reason = "a finished step is handed straight back to its one caller; boxing it would buy nothing"
)]

mod cel_meter;
mod delay;
mod condition;
mod consensus;
mod envelope;
mod handback;
mod map;
mod render;
mod lifecycle;
mod machine;
mod round_robin;
mod script;
mod server;
pub mod state;

use serde_json::{Map, Value, json};

use crate::definition::{Node, Target};

pub use crate::definition::validate_inputs;
pub use delay::DELAY_PHASE;
pub use script::{Program, RetryPolicy, ScriptJob, ScriptResult};
pub use server::{MAX_SERVER_ROUNDS, ModelJob};
pub use state::{
    AgentSpec, Billing, Budget, BudgetHold, Context, Cost, Execution, Matchup, ModelCall, ModelSettings, NodeRun,
    NodeStatus, PendingStep, Price, Run, RunStatus, TransitionInfo,
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
    /// The run was just created as a fork of another (`fork_run`), its context holding what came before: start at
    /// `node_id`.
    StartAt {
        /// The node to start at.
        node_id: String,
    },
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
    /// The timer of paused node run `node_run_id` fell due: a node's `delayMs` is over, so the node starts; or nobody
    /// answered a human step within its node's `timeoutMs`, so the node takes its `timeout` transition.
    TimerFired {
        /// The paused node run.
        node_run_id: String,
    },
    /// The server's model calls for the step of node run `node_run_id` answered it (a server-executed run, or a live
    /// fan-out step of `test_workflow`): the answer goes to the node's executor as a host's would, and `calls` are
    /// charged as reported.
    ModelsAnswered {
        /// The node run.
        node_run_id: String,
        /// The calls' answers, as the step's tool would carry them.
        answer: Answer,
        /// The calls made.
        calls: Vec<ModelCall>,
    },
    /// A model call for node run `node_run_id` failed after its retries: the node fails as a failed script does.
    ModelsFailed {
        /// The node run.
        node_run_id: String,
        /// What went wrong.
        error: String,
        /// The calls that were made all the same (they cost what they cost).
        calls: Vec<ModelCall>,
    },
    /// The next calls for node run `node_run_id` could take the tree past its budget: the run pauses until it is
    /// raised.
    BudgetExceeded {
        /// The node run.
        node_run_id: String,
        /// Spent, limit and the calls' worst case.
        hold: BudgetHold,
    },
    /// No provider serves the models of node run `node_run_id`'s step: the step is handed back to a host.
    HandedBack {
        /// The node run.
        node_run_id: String,
        /// Why the server cannot call.
        reason: String,
    },
    /// The budget was raised: a run paused on it makes its calls again (checked against the budget once more).
    BudgetRaised,
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
    /// Call models for a step of a server-executed run, then apply [`Event::ModelsAnswered`] (or
    /// [`Event::ModelsFailed`], [`Event::BudgetExceeded`]).
    CallModels(ModelJob),
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
    /// When the work of this call must stop, in epoch milliseconds (`test_workflow`'s `timeout_ms`); `None` when
    /// only the engine's own limits apply.
    fn deadline(&self) -> Option<i64> {
        None
    }
}

/// Applies `event` to `run`.
pub fn apply(run: &Run, event: Event, env: &mut dyn Env) -> Result<Outcome, Rejection> {
    let mut engine = Engine {
        run: run.clone(),
        records: Vec::new(),
        effects: Vec::new(),
        notice: None,
        measured: false,
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

/// One application of an event: the run being changed and what the change produced.
struct Engine<'e> {
    run: Run,
    records: Vec<NodeRun>,
    effects: Vec<Effect>,
    notice: Option<Rejection>,
    /// The answer being applied came with the calls' reported usage, so the host's work is not estimated.
    measured: bool,
    env: &'e mut dyn Env,
}

impl Engine<'_> {
    /// Applies one event: the run's lifecycle ([`lifecycle`]) and its way through the nodes ([`machine`]).
    fn handle(&mut self, event: Event) -> Result<(), Rejection> {
        match event {
            Event::Start => {
                self.start()?;
                self.drive();
            }
            Event::StartAt { node_id } => {
                self.start_at(&node_id)?;
                self.drive();
            }
            Event::Answer { node_id, answer } => self.answer(node_id, answer)?,
            Event::ScriptStarted { node_run_id, pid } => {
                let open = self.open_running(&node_run_id)?;
                open.phase_state = json!({ "pid": pid });
            }
            Event::ScriptFinished { node_run_id, result } => {
                let open = self.open_running(&node_run_id)?;
                open.attempts = result.attempts;
                self.finish_open(script::finish(result));
                self.drive();
            }
            Event::ChildFinished { child_run_id, status, output, error, error_code } => {
                let finish = self.child_finished(&child_run_id, status, output, error, error_code)?;
                self.finish_open(finish);
                self.drive();
            }
            Event::TimerFired { node_run_id } => {
                self.waiting(&node_run_id)?;
                if self.run.delayed_until().is_some() {
                    self.end_delay();
                } else {
                    self.finish_open(Finish::ok(json!({ "timedOut": true }), "timeout"));
                }
                self.drive();
            }
            Event::Cancel { reason } => self.cancel(reason)?,
            Event::Retry => {
                self.retry()?;
                self.drive();
            }
            Event::RunnerLost => self.runner_lost()?,
            Event::ModelsAnswered { node_run_id, answer, calls } => self.models_answered(&node_run_id, answer, calls)?,
            Event::ModelsFailed { node_run_id, error, calls } => self.models_failed(&node_run_id, error, calls)?,
            Event::BudgetExceeded { node_run_id, hold } => self.budget_exceeded(&node_run_id, hold)?,
            Event::HandedBack { node_run_id, reason } => self.handed_back(&node_run_id, reason)?,
            Event::BudgetRaised => self.budget_raised()?,
        }
        Ok(())
    }

    /// The opening every fan-out answer shares: one response per agent of the pending step (else
    /// `wrong_response_count`), each agent's work charged, the attempt counted. Returns the agents.
    fn count_responses(&mut self, pending: &PendingStep, responses: &[String]) -> Result<Vec<AgentSpec>, Rejection> {
        let agents = pending.agents.clone().unwrap_or_default();
        if responses.len() != agents.len() {
            return Err(Rejection::new(
                "wrong_response_count",
                format!("Expected {} responses, got {}", agents.len(), responses.len()),
            ));
        }
        for (agent, response) in agents.iter().zip(responses) {
            self.charge(&agent.model, &agent.prompt, response);
        }
        self.run.open.as_mut().expect("open").attempts += 1;
        Ok(agents)
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
            calls: Vec::new(),
        }
    }

    /// Records the host's work on the open node run: tokens estimated from text length, priced by `model`. An
    /// answer the server's calls made is charged from their reported usage instead.
    fn charge(&mut self, model: &str, prompt: &str, response: &str) {
        if self.measured {
            return;
        }
        let input = prompt.chars().count().div_ceil(4) as i64;
        let output = response.chars().count().div_ceil(4) as i64;
        let price = self.run.models.pricing.get(model);
        let cost = Cost {
            subscription_usd: price.map_or(0.0, |p| p.usd(input, output, 0, 0)),
            input_tokens: input,
            output_tokens: output,
            subscription_calls: 1,
            unpriced_calls: i64::from(price.is_none()),
            ..Cost::default()
        };
        self.run.cost.add(cost);
        if let Some(open) = self.run.open.as_mut() {
            open.cost.add(cost);
        }
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
                    label: node
                        .config
                        .get("labels")
                        .and_then(|labels| labels.get(&t.event))
                        .and_then(Value::as_str)
                        .map(str::to_owned),
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
            budget_exceeded: None,
            handed_back: None,
            allow_comment: None,
        }
    }
}

#[cfg(test)]
mod tests;
