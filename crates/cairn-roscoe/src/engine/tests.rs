//! Engine tests: workflows driven event by event with a fixed clock, no database, no processes.

use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::definition;

struct TestEnv {
    next: u32,
}

impl Env for TestEnv {
    fn now(&self) -> i64 {
        1_000
    }
    fn new_id(&mut self) -> String {
        self.next += 1;
        format!("id{}", self.next)
    }
}

fn workflow(yaml: &str) -> Arc<definition::Workflow> {
    Arc::new(definition::parse(yaml, None).unwrap_or_else(|e| panic!("{e:?}")))
}

fn run(yaml: &str, input: Value) -> Run {
    let workflow = workflow(yaml);
    let input = validate_inputs(&workflow, Some(&input)).unwrap();
    Run {
        id: "run1".into(),
        project_id: "p".into(),
        project_root: None,
        root_run_id: "run1".into(),
        parent_run_id: None,
        parent_node_run_id: None,
        depth: 0,
        workflow,
        models: Arc::new(ModelSettings { default: "model-x".into(), ..ModelSettings::default() }),
        workflow_source: "repo".into(),
        workflow_path: "w.yaml".into(),
        workflow_dir: "/wf".into(),
        source: "mcp".into(),
        kind: "user".into(),
        started_by: None,
        exec_allowed: true,
        execution: Execution::Host,
        status: RunStatus::Running,
        current_node: None,
        pending: None,
        awaiting_child: None,
        input,
        context: Context::default(),
        output: None,
        error: None,
        error_code: None,
        cost: Cost::default(),
        started_at: 0,
        completed_at: None,
        attempt: 1,
        open: None,
    }
}

/// Applies `event`, panicking on a rejection; returns the outcome.
fn check(run: &Run, event: Event) -> Outcome {
    apply(run, event, &mut TestEnv { next: 100 }).unwrap_or_else(|r| panic!("rejected: {r:?}"))
}

fn respond(text: &str) -> Event {
    Event::Answer { node_id: None, answer: Answer::Response { response: text.into(), failed: false } }
}

fn script_done(outcome: &Outcome, code: i32, stdout: &str) -> Event {
    let Some(Effect::RunScript(job)) = outcome.effects.last() else { panic!("no script effect: {:?}", outcome.effects) };
    Event::ScriptFinished {
        node_run_id: job.node_run_id.clone(),
        result: ScriptResult { exit_code: Some(code), stdout: stdout.into(), success: code == 0, attempts: 1, ..Default::default() },
    }
}

const LOOP: &str = "name: loop\ninitial: verify\nnodes:\n  verify:\n    type: ai_judge\n    config: { prompt: check }\n    transitions: { pass: $end, fail: fix }\n  fix:\n    type: ai_agent\n    maxIterations: 2\n    config: { prompt: 'fix {{ verify.reasoning || \"it\" }}' }\n    transitions: { success: verify, max_iterations: $fail }\n";

#[test]
fn script_then_condition_run_synchronously_and_pause_at_the_first_ai_node() {
    let yaml = "name: w\ninitial: s\ninputs:\n  who: { type: string, default: world }\nnodes:\n  s:\n    type: script\n    config: { command: 'echo {{ input.who }}' }\n    transitions: { success: c }\n  c:\n    type: condition\n    config: { expression: 's.exitCode == 0' }\n    transitions: { 'true': a, 'false': $fail }\n  a:\n    type: ai_agent\n    config: { prompt: 'said {{ s.stdout }}' }\n    transitions: { success: $end }\n";
    let start = check(&run(yaml, json!({ "who": "it's me" })), Event::Start);
    let Some(Effect::RunScript(job)) = start.effects.first() else { panic!() };
    assert_eq!(job.program, Program::Shell("echo 'it'\\''s me'".into()));
    assert_eq!(start.run.status, RunStatus::Running);
    let paused = check(&start.run, script_done(&start, 0, "hi"));
    assert_eq!(paused.run.status, RunStatus::Paused);
    let step = paused.run.pending.as_ref().unwrap();
    assert_eq!((step.node_id.as_str(), step.node_type.as_str()), ("a", "ai_agent"));
    assert_eq!(step.prompt, "said hi");
    assert_eq!(step.model.as_deref(), Some("model-x"));
    assert_eq!(paused.records.iter().map(|r| r.node_id.as_str()).collect::<Vec<_>>(), ["s", "c"]);
    let done = check(&paused.run, respond("ok"));
    assert_eq!(done.run.status, RunStatus::Completed);
    assert_eq!(done.run.output, Some(json!({ "text": "ok" })));
}

#[test]
fn max_iterations_routes_after_the_capped_node_ran_n_times() {
    let mut r = check(&run(LOOP, json!({})), Event::Start).run;
    let mut fixes = 0;
    for _ in 0..3 {
        assert_eq!(r.pending.as_ref().unwrap().node_id, "verify");
        r = check(&r, respond(r#"{"reasoning":"bad","verdict":"fail"}"#)).run;
        if r.status != RunStatus::Paused {
            break;
        }
        assert_eq!(r.pending.as_ref().unwrap().node_id, "fix");
        assert_eq!(r.pending.as_ref().unwrap().prompt, "fix bad");
        fixes += 1;
        r = check(&r, respond("fixed")).run;
    }
    assert_eq!(fixes, 2);
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(r.error_code.as_deref(), Some("routed_to_fail"));
    assert_eq!(r.context.iterations["fix"], 2);
}

#[test]
fn a_cap_without_a_max_iterations_route_fails_the_run() {
    let yaml = LOOP.replace(", max_iterations: $fail", "");
    let mut r = check(&run(&yaml, json!({})), Event::Start).run;
    for _ in 0..2 {
        r = check(&r, respond(r#"{"verdict":"fail"}"#)).run;
        r = check(&r, respond("fixed")).run;
    }
    let r = check(&r, respond(r#"{"verdict":"fail"}"#)).run;
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(r.error_code.as_deref(), Some("max_iterations_exceeded"));
}

#[test]
fn the_step_cap_stops_an_endless_human_loop() {
    let yaml = "name: h\ninitial: ask\nnodes:\n  ask:\n    type: human\n    config: { prompt: again? }\n    transitions: { again: ask, stop: $end }\n";
    let mut r = check(&run(yaml, json!({})), Event::Start).run;
    let human = |t: &str| Event::Answer {
        node_id: None,
        answer: Answer::Human { transition: t.into(), comment: None, decided_by: "mcp".into(), principal: "local person".into() },
    };
    for _ in 0..MAX_STEPS - 1 {
        r = check(&r, human("again")).run;
    }
    assert_eq!(r.status, RunStatus::Paused);
    let r = check(&r, human("1")).run;
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(r.error_code.as_deref(), Some("max_steps_exceeded"));
}

#[test]
fn judge_envelopes_are_validated_and_the_third_invalid_one_fails_the_node() {
    let mut r = check(&run(LOOP, json!({})), Event::Start).run;
    for attempt in 1..=2 {
        let out = check(&r, respond("no idea"));
        let notice = out.notice.unwrap();
        assert_eq!(notice.code, "invalid_response");
        let step = out.run.pending.as_ref().unwrap();
        assert_eq!((step.node_id.as_str(), step.attempt), ("verify", attempt));
        assert!(step.prompt.contains("previous response was invalid"));
        r = out.run;
    }
    let out = check(&r, respond("still no"));
    assert_eq!(out.run.status, RunStatus::Failed);
    assert!(out.run.error.unwrap().contains("3 invalid judge responses"));
}

#[test]
fn rejected_answers_leave_the_run_untouched() {
    let r = check(&run(LOOP, json!({})), Event::Start).run;
    let stale = Event::Answer { node_id: Some("fix".into()), answer: Answer::Response { response: "x".into(), failed: false } };
    assert_eq!(apply(&r, stale, &mut TestEnv { next: 0 }).unwrap_err().code, "stale_step");
    let wrong = Event::Answer { node_id: None, answer: Answer::Map { responses: vec![] } };
    let err = apply(&r, wrong, &mut TestEnv { next: 0 }).unwrap_err();
    assert_eq!(err.code, "wrong_tool");
    assert!(err.message.contains("advance_run"));
    let human_yaml = "name: h\ninitial: ask\nnodes:\n  ask:\n    type: human\n    config: { prompt: go? }\n    transitions: { approve: $end, deny: $fail }\n";
    let h = check(&run(human_yaml, json!({})), Event::Start).run;
    assert_eq!(apply(&h, respond("yes"), &mut TestEnv { next: 0 }).unwrap_err().code, "wrong_tool");
    let bad = Event::Answer { node_id: None, answer: Answer::Human { transition: "maybe".into(), comment: None, decided_by: "mcp".into(), principal: "local person".into() } };
    let err = apply(&h, bad, &mut TestEnv { next: 0 }).unwrap_err();
    assert_eq!(err.code, "invalid_transition");
    assert_eq!(err.extra["validTransitions"], json!(["approve", "deny"]));
    let done = check(&h, Event::Answer { node_id: Some("ask".into()), answer: Answer::Human { transition: "APPROVE".into(), comment: Some("ok".into()), decided_by: "mcp".into(), principal: "local person".into() } });
    assert_eq!(done.run.status, RunStatus::Completed);
    assert_eq!(done.run.output, Some(json!({ "choice": "approve", "comment": "ok", "decidedBy": "mcp", "principal": "local person" })));
    assert_eq!(apply(&done.run, respond("x"), &mut TestEnv { next: 0 }).unwrap_err().code, "terminal");
}

#[test]
fn top_level_outputs_render_from_completed_nodes() {
    let yaml = "name: o\ninitial: a\noutputs:\n  summary: 'got {{ a.text }}'\n  data: '{{ a.json }}'\nnodes:\n  a:\n    type: ai_agent\n    config: { prompt: p }\n";
    let r = check(&run(yaml, json!({})), Event::Start).run;
    let done = check(&r, respond(r#"{"n": [1, 2]}"#)).run;
    assert_eq!(done.output, Some(json!({ "summary": "got {\"n\": [1, 2]}", "data": { "n": [1, 2] } })));
}

#[test]
fn inputs_are_checked_and_defaulted() {
    let w = workflow("name: i\ninitial: a\ninputs:\n  n: { type: integer, required: true }\n  mode: { type: string, default: fast, enum: [fast, slow] }\nnodes:\n  a: { type: ai_agent, config: { prompt: p } }\n");
    assert_eq!(validate_inputs(&w, Some(&json!({ "n": 2 }))), Ok(json!({ "n": 2, "mode": "fast" })));
    let err = validate_inputs(&w, Some(&json!({ "mode": "warp", "x": 1 }))).unwrap_err();
    assert!(err.contains("unknown input 'x'") && err.contains("'n' is required") && err.contains("one of"), "{err}");
    assert!(validate_inputs(&w, Some(&json!({ "n": "2" }))).unwrap_err().contains("type integer"));
}

#[test]
fn a_failed_script_without_a_failure_route_fails_the_run_and_retry_reruns_it() {
    let yaml = "name: r\ninitial: a\nnodes:\n  a:\n    type: ai_agent\n    config: { prompt: p }\n    transitions: { success: s }\n  s:\n    type: script\n    config: { command: 'false' }\n    transitions: { success: $end }\n";
    let r = check(&run(yaml, json!({})), Event::Start).run;
    let at_script = check(&r, respond("done"));
    let failed = check(&at_script.run, script_done(&at_script, 1, ""));
    assert_eq!(failed.run.status, RunStatus::Failed);
    assert_eq!(failed.run.error_code.as_deref(), Some("node_failed"));
    assert!(failed.run.error.as_deref().unwrap().contains("exited with code 1"));
    let retried = check(&failed.run, Event::Retry);
    assert_eq!(retried.run.status, RunStatus::Running);
    assert_eq!(retried.run.attempt, 2);
    assert!(matches!(retried.effects.as_slice(), [Effect::RunScript(job)] if job.node_id == "s"));
    assert_eq!(retried.run.context.nodes["a"]["text"], "done", "completed outputs are kept");
    let done = check(&retried.run, script_done(&retried, 0, "ok"));
    assert_eq!(done.run.status, RunStatus::Completed);
    assert_eq!(apply(&done.run, Event::Retry, &mut TestEnv { next: 0 }).unwrap_err().code, "not_retryable");
}

#[test]
fn cancel_finalizes_the_open_node_and_kills_its_script() {
    let yaml = "name: c\ninitial: s\nnodes:\n  s:\n    type: script\n    config: { command: 'sleep 100' }\n";
    let started = check(&run(yaml, json!({})), Event::Start);
    let Some(Effect::RunScript(job)) = started.effects.first() else { panic!() };
    let with_pid = check(&started.run, Event::ScriptStarted { node_run_id: job.node_run_id.clone(), pid: 4242 });
    let cancelled = check(&with_pid.run, Event::Cancel { reason: None });
    assert_eq!(cancelled.run.status, RunStatus::Cancelled);
    assert_eq!(cancelled.effects, vec![Effect::Kill { pid: 4242 }]);
    assert_eq!(cancelled.records[0].status, RunStatus::Cancelled);
    let late = Event::ScriptFinished { node_run_id: job.node_run_id.clone(), result: ScriptResult::default() };
    assert_eq!(apply(&cancelled.run, late, &mut TestEnv { next: 0 }).unwrap_err().code, "stale_step");
    assert_eq!(apply(&cancelled.run, Event::Cancel { reason: None }, &mut TestEnv { next: 0 }).unwrap_err().code, "terminal");
}

#[test]
fn subworkflow_waits_for_its_child_and_follows_its_outcome() {
    let yaml = "name: p\ninitial: call\nnodes:\n  call:\n    type: subworkflow\n    config: { workflow: child, inputs: { n: '{{ input.n }}' } }\n    transitions: { success: $end, failure: $fail }\n";
    let started = check(&run(yaml, json!({ "n": 3 })), Event::Start);
    let Some(Effect::StartChild(job)) = started.effects.first() else { panic!() };
    assert_eq!(job.inputs["n"], json!(3), "a single reference keeps its JSON type");
    assert_eq!(started.run.awaiting_child.as_deref(), Some(job.child_run_id.as_str()));
    let done = check(&started.run, Event::ChildFinished {
        child_run_id: job.child_run_id.clone(),
        status: RunStatus::Completed,
        output: Some(json!({ "x": 1 })),
        error: None,
        error_code: None,
    });
    assert_eq!(done.run.status, RunStatus::Completed);
    assert_eq!(done.run.output.unwrap()["output"], json!({ "x": 1 }));
}

#[test]
fn an_unanswered_human_step_takes_its_timeout_transition() {
    let yaml = "name: t\ninitial: ask\nnodes:\n  ask:\n    type: human\n    timeoutMs: 1000\n    config: { prompt: go? }\n    transitions: { go: $end, timeout: $fail }\n";
    let r = check(&run(yaml, json!({})), Event::Start).run;
    assert_eq!(r.pending.as_ref().unwrap().valid_transitions, ["go"], "timeout is not a choice");
    let open = r.open.as_ref().unwrap().id.clone();
    let stale = Event::TimerFired { node_run_id: "other".into() };
    assert_eq!(apply(&r, stale, &mut TestEnv { next: 0 }).unwrap_err().code, "stale_step");
    let timed_out = check(&r, Event::TimerFired { node_run_id: open });
    assert_eq!(timed_out.run.status, RunStatus::Failed);
    assert_eq!(timed_out.run.error_code.as_deref(), Some("routed_to_fail"));
    assert_eq!(timed_out.records[0].event.as_deref(), Some("timeout"));
}

#[test]
fn a_delay_pauses_before_its_node_starts_and_its_timer_starts_it() {
    let yaml = "name: t\ninitial: wait\nnodes:\n  wait:\n    type: condition\n    config: { expression: 'true', delayMs: 5000 }\n    transitions: { 'true': ask, 'false': $fail }\n  ask:\n    type: human\n    config: { prompt: go?, delayMs: 2000 }\n    transitions: { go: $end }\n";
    let r = check(&run(yaml, json!({})), Event::Start).run;
    assert_eq!(r.status, RunStatus::Paused);
    assert!(r.pending.is_none(), "a delay is no step for the host");
    assert_eq!(r.delayed_until(), Some(6_000));
    let open = r.open.as_ref().unwrap().id.clone();
    let answer = Answer::Human {
        transition: "go".into(),
        comment: None,
        decided_by: "mcp".into(),
        principal: "Ada".into(),
    };
    let early = apply(&r, Event::Answer { node_id: None, answer }, &mut TestEnv { next: 0 }).unwrap_err();
    assert_eq!(early.code, "not_paused");
    assert!(early.message.contains("delayMs") && early.message.contains("'wait'"), "{}", early.message);
    // The condition ran when its delay ended, and the next node waits out its own before its human step.
    let next = check(&r, Event::TimerFired { node_run_id: open });
    assert_eq!(next.records[0].event.as_deref(), Some("true"));
    assert_eq!(next.run.status, RunStatus::Paused);
    assert!(next.run.pending.is_none());
    assert_eq!(next.run.open.as_ref().unwrap().node_id, "ask");
    let open = next.run.open.as_ref().unwrap().id.clone();
    let asked = check(&next.run, Event::TimerFired { node_run_id: open });
    assert_eq!(asked.run.pending.as_ref().unwrap().node_id, "ask");
    assert_eq!(asked.run.delayed_until(), None);
}
