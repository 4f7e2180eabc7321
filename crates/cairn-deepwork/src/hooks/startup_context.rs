//! `deepwork hook startup_context`: what the model must know when a session or a sub-agent starts.
//!
//! Claude Code's `SessionStart` and `SubagentStart` events carry the `session_id` (and a sub-agent's `agent_id`) that
//! the workflow tools want; the model never sees them unless a hook puts them into its context. The answer's
//! `additionalContext` holds `CLAUDE_CODE_SESSION_ID=<id>` (and `CLAUDE_CODE_AGENT_ID=<id>` for a sub-agent) and one
//! sentence saying where to pass them. After a compaction (`SessionStart` with `source: compact`) it also holds the
//! session's active workflows — what `deepwork jobs get-stack` prints, only this session's — so the model can resume
//! the step it was on. An id that could not be used as a session id (see [`check_path_id`]) is left out; an event
//! with nothing to say, or of another kind, is answered `{}`.

use serde_json::{Value, json};

use super::HookEvent;
use crate::ids::check_path_id;

/// The start events this hook answers.
const START_EVENTS: [&str; 2] = ["SessionStart", "SubagentStart"];

/// The `source` of a `SessionStart` that follows a compaction of the context.
const AFTER_COMPACTION: &str = "compact";

/// Whether `event` asks for the session's active workflows (a `SessionStart` after a compaction with a session id).
pub(super) fn wants_stack(event: &HookEvent) -> Option<&str> {
    let session = usable(event.session_id.as_deref())?;
    (event_name(event)? == "SessionStart" && event.source.as_deref() == Some(AFTER_COMPACTION)).then_some(session)
}

/// The hook's answer to `event`. `stack` is the session's active workflows when [`wants_stack`] asked for them
/// (`Err` says why they could not be read).
pub(super) fn answer(event: &HookEvent, stack: Option<Result<Vec<Value>, String>>) -> Value {
    let Some(name) = event_name(event) else { return json!({}) };
    let Some(session) = usable(event.session_id.as_deref()) else { return json!({}) };
    let agent = usable(event.agent_id.as_deref()).filter(|_| name == "SubagentStart");
    let mut context = format!("CLAUDE_CODE_SESSION_ID={session}\n");
    match agent {
        Some(agent) => context.push_str(&format!(
            "CLAUDE_CODE_AGENT_ID={agent}\n\nPass CLAUDE_CODE_SESSION_ID as `session_id` and CLAUDE_CODE_AGENT_ID as \
             `agent_id` to the DeepWork workflow tools (start_workflow, finished_step, abort_workflow, go_to_step)."
        )),
        None => context.push_str(
            "\nPass CLAUDE_CODE_SESSION_ID as `session_id` to the DeepWork workflow tools (start_workflow, \
             finished_step, abort_workflow, go_to_step, register_session_job, get_session_job).",
        ),
    }
    match stack {
        Some(Ok(workflows)) if !workflows.is_empty() => {
            let shown = serde_json::to_string_pretty(&json!({"active_sessions": workflows})).expect("JSON serializes");
            context.push_str(&format!(
                "\n\n## Active DeepWork workflows of this session\n\nYour context was compacted while these workflows \
                 were active (the most recently started first). Carry on with the current step of the first one and \
                 call `finished_step` with this session_id when it is done.\n\n{shown}"
            ));
        }
        Some(Err(error)) => context.push_str(&format!("\n\nThe active DeepWork workflows could not be read: {error}")),
        _ => {}
    }
    json!({"hookSpecificOutput": {"hookEventName": name, "additionalContext": context}})
}

/// The start event `event` is: its `hook_event_name`, or without one `SubagentStart` when it names an agent and
/// `SessionStart` otherwise; `None` for any other event.
fn event_name(event: &HookEvent) -> Option<&'static str> {
    match event.event.as_deref() {
        Some(name) => START_EVENTS.into_iter().find(|start| *start == name),
        None if event.agent_id.is_some() => Some("SubagentStart"),
        None => Some("SessionStart"),
    }
}

/// `id` when it can be used as a session or agent id.
fn usable(id: Option<&str>) -> Option<&str> {
    id.filter(|id| check_path_id("session_id", id).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(value: Value) -> HookEvent {
        HookEvent::parse(&value.to_string())
    }

    fn context(answer: &Value) -> &str {
        answer["hookSpecificOutput"]["additionalContext"].as_str().unwrap()
    }

    #[test]
    fn a_session_start_gets_the_session_id() {
        let start = event(json!({"hook_event_name": "SessionStart", "session_id": "s-1", "source": "startup"}));
        assert_eq!(wants_stack(&start), None);
        let answer = answer(&start, None);
        assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "SessionStart");
        let text = context(&answer);
        assert!(text.starts_with("CLAUDE_CODE_SESSION_ID=s-1\n\nPass CLAUDE_CODE_SESSION_ID as `session_id`"), "{text}");
        assert!(!text.contains("CLAUDE_CODE_AGENT_ID"), "{text}");
    }

    #[test]
    fn a_subagent_gets_its_agent_id_too() {
        let start = event(json!({"hook_event_name": "SubagentStart", "session_id": "s-1", "agent_id": "a-7",
            "agent_type": "cairn:reviewer"}));
        let answer = answer(&start, None);
        assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "SubagentStart");
        assert!(context(&answer).starts_with("CLAUDE_CODE_SESSION_ID=s-1\nCLAUDE_CODE_AGENT_ID=a-7\n\n"), "{answer}");
        // Without an event name, an agent id means a sub-agent.
        let unnamed = answer_of(json!({"session_id": "s-1", "agent_id": "a-7"}));
        assert_eq!(unnamed["hookSpecificOutput"]["hookEventName"], "SubagentStart");
    }

    fn answer_of(value: Value) -> Value {
        answer(&event(value), None)
    }

    #[test]
    fn after_compaction_the_active_workflows_follow() {
        let compacted = event(json!({"hook_event_name": "SessionStart", "session_id": "s-1", "source": "compact"}));
        assert_eq!(wants_stack(&compacted), Some("s-1"));
        let workflow = json!({"session_id": "s-1", "job_name": "j", "workflow_name": "w", "current_step_id": "b"});
        let text = context(&answer(&compacted, Some(Ok(vec![workflow])))).to_owned();
        assert!(text.contains("## Active DeepWork workflows of this session"), "{text}");
        assert!(text.contains("\"current_step_id\": \"b\""), "{text}");
        let none = answer(&compacted, Some(Ok(Vec::new())));
        assert!(!context(&none).contains("Active DeepWork workflows"), "{none}");
        let failed = answer(&compacted, Some(Err("disk on fire".into())));
        assert!(context(&failed).ends_with("The active DeepWork workflows could not be read: disk on fire"), "{failed}");
        // A subagent's start never asks for the stack.
        let sub = event(json!({"hook_event_name": "SubagentStart", "session_id": "s-1", "source": "compact"}));
        assert_eq!(wants_stack(&sub), None);
    }

    #[test]
    fn nothing_to_say_is_an_empty_answer() {
        for value in [
            json!({}),
            json!({"hook_event_name": "SessionStart"}),
            json!({"hook_event_name": "SessionStart", "session_id": ""}),
            json!({"hook_event_name": "SessionStart", "session_id": "../escape"}),
            json!({"hook_event_name": "PostToolUse", "session_id": "s-1"}),
        ] {
            assert_eq!(answer_of(value.clone()), json!({}), "{value}");
        }
        // A bad agent id is left out; the session id still comes.
        let bad_agent = answer_of(json!({"hook_event_name": "SubagentStart", "session_id": "s", "agent_id": "a\nb"}));
        assert!(!context(&bad_agent).contains("CLAUDE_CODE_AGENT_ID"), "{bad_agent}");
    }
}
