//! The state machine proper: how a run moves through its nodes. [`Engine::drive`] runs nodes until the run pauses,
//! finishes or waits for an effect, counting visits (`maxIterations`, whose skip takes the `max_iterations` route)
//! and steps (the 1,000-step cap); entering a node hands it to its executor, an answer is checked (stale, terminal,
//! not paused, wrong tool) and fed to the executor of the pending node, and a finished node run follows its event's
//! transition — to a node, `$end`, `$fail`, or the end of a sink. Script and child-run results arrive here too.

use serde_json::{Map, Value, json};

use super::{
    Answer, ChildJob, Effect, Engine, Finish, MAX_DEPTH, MAX_STEPS, Rejection, Step, condition, consensus, handback,
    map, render, round_robin, script, tool_for,
};
use super::{Cost, NodeRun, PendingStep, RunStatus};
use crate::definition::{Node, NodeType, Target};

impl Engine<'_> {
    /// The open node run, which must be `node_run_id` and running.
    pub(super) fn open_running(&mut self, node_run_id: &str) -> Result<&mut NodeRun, Rejection> {
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

    /// The finish of the subworkflow node waiting for child run `child_run_id`, which ended with `status`.
    pub(super) fn child_finished(
        &mut self,
        child_run_id: &str,
        status: RunStatus,
        output: Option<Value>,
        error: Option<String>,
        error_code: Option<String>,
    ) -> Result<Finish, Rejection> {
        if self.run.status != RunStatus::Paused || self.run.awaiting_child.as_deref() != Some(child_run_id) {
            return Err(Rejection::new(
                "stale_step",
                format!("run {} is not waiting for child run {child_run_id}", self.run.id),
            ));
        }
        let summary = json!({ "childRunId": child_run_id, "status": status.as_str(), "output": output });
        Ok(if status == RunStatus::Completed {
            Finish::ok(summary, "success")
        } else {
            let code = error_code.as_deref().and_then(known_code);
            let message = error.unwrap_or_else(|| format!("the child run {}", status.as_str()));
            Finish::failed(summary, format!("subworkflow: {message}"), code)
        })
    }

    /// Checks that node run `node_run_id` still waits for the host (its step timing out).
    pub(super) fn waiting(&self, node_run_id: &str) -> Result<(), Rejection> {
        let waiting =
            self.run.open.as_ref().is_some_and(|open| open.id == node_run_id && self.run.status == RunStatus::Paused);
        if !waiting {
            return Err(Rejection::new("stale_step", format!("node run {node_run_id} is no longer waiting")));
        }
        Ok(())
    }

    pub(super) fn answer(&mut self, node_id: Option<String>, answer: Answer) -> Result<(), Rejection> {
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
        if let Some(until) = self.run.delayed_until() {
            let node = self.run.open.as_ref().map_or("", |open| open.node_id.as_str());
            return Err(Rejection::new(
                "not_paused",
                format!(
                    "run {} has no pending step: it waits until {} before node '{node}' starts (its delayMs), then \
                     goes on by itself; call get_run_status after that",
                    self.run.id,
                    crate::clock::rfc3339(until)
                ),
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
    pub(super) fn submit(
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

    /// Applies what an executor decided: pause (again) — or, for a step the server executes, ask for its model
    /// calls —, wait, or finish the open node run.
    pub(super) fn settle(&mut self, step: Step) {
        match step {
            Step::Done(finish) => self.finish_open(finish),
            Step::Pause(pending) if self.hand_to_server(&pending) => {}
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
    pub(super) fn drive(&mut self) {
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
            if self.env.deadline().is_some_and(|at| self.env.now() >= at) {
                self.fail_run(
                    "timeout",
                    "the run's time ran out (test_workflow's timeout_ms) before it reached an end".to_owned(),
                );
                return;
            }
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
            if let Some(ms) = node.delay_ms() {
                self.start_delay(ms);
                continue;
            }
            let step = self.enter(node);
            self.settle(step);
        }
    }

    /// Starts executing `node` (the open node run is already there).
    pub(super) fn enter(&mut self, node: &Node) -> Step {
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
            calls: Vec::new(),
        }
    }

    /// Finishes the open node run and follows its event.
    pub(super) fn finish_open(&mut self, finish: Finish) {
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
