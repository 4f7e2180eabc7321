//! The single-step handback executors (§7.3, §7.4, §7.8): `ai_agent` (any text), `ai_judge` (a validated
//! `{reasoning, verdict}` envelope whose verdict is the event) and `human` (a transition chosen by a person).

use serde_json::{Value, json};

use super::envelope;
use super::render;
use super::{Engine, Finish, PendingStep, Rejection, Step};
use crate::definition::Node;

/// `{ text, json? }` for a free-text response.
pub(super) fn text_output(response: &str) -> Value {
    let mut output = json!({ "text": response });
    if let Ok(parsed) = serde_json::from_str::<Value>(response.trim()) {
        output["json"] = parsed;
    }
    output
}

fn prompt_with_system(engine: &mut Engine<'_>, node: &Node) -> Result<String, Finish> {
    let prompt = render::text(engine, node.config_str("prompt").unwrap_or_default(), &[])?;
    match node.config_str("system") {
        Some(system) => {
            let system = render::text(engine, system, &[])?;
            Ok(format!("## System\n\n{system}\n\n## Task\n\n{prompt}"))
        }
        None => Ok(prompt),
    }
}

pub(super) fn agent_enter(engine: &mut Engine<'_>, node: &Node) -> Step {
    let prompt = match prompt_with_system(engine, node) {
        Ok(prompt) => prompt,
        Err(finish) => return Step::Done(finish),
    };
    let model = engine.run.models.for_node(&engine.run.workflow, node);
    let mut step = engine.pending(node, prompt.clone(), vec!["success".into()]);
    step.model = Some(model.clone());
    let open = engine.run.open.as_mut().expect("open");
    open.model = Some(model);
    open.input = Some(json!({ "prompt": prompt }));
    Step::Pause(step)
}

pub(super) fn agent_answer(engine: &mut Engine<'_>, pending: &PendingStep, response: String, failed: bool) -> Step {
    engine.charge(pending.model.as_deref().unwrap_or_default(), &pending.prompt, &response);
    engine.run.open.as_mut().expect("open").attempts += 1;
    let output = text_output(&response);
    if failed {
        Step::Done(Finish::failed(output, "the host reported that it could not complete the task", None))
    } else {
        Step::Done(Finish::ok(output, "success"))
    }
}

pub(super) fn judge_enter(engine: &mut Engine<'_>, node: &Node) -> Step {
    let prompt = match render::text(engine, node.config_str("prompt").unwrap_or_default(), &[]) {
        Ok(prompt) => prompt,
        Err(finish) => return Step::Done(finish),
    };
    let choices = node.choices();
    let prompt = format!("{prompt}\n\n{}", envelope::judge_instruction(&choices));
    let model = engine.run.models.for_node(&engine.run.workflow, node);
    let mut step = engine.pending(node, prompt.clone(), choices);
    step.model = Some(model.clone());
    let open = engine.run.open.as_mut().expect("open");
    open.model = Some(model);
    open.input = Some(json!({ "prompt": prompt }));
    open.phase_state = json!({ "prompt": prompt });
    Step::Pause(step)
}

pub(super) fn judge_answer(engine: &mut Engine<'_>, node: &Node, pending: &PendingStep, response: String) -> Step {
    engine.charge(pending.model.as_deref().unwrap_or_default(), &pending.prompt, &response);
    let open = engine.run.open.as_mut().expect("open");
    open.attempts += 1;
    let attempts = open.attempts;
    let base = open.phase_state.get("prompt").and_then(Value::as_str).unwrap_or(&pending.prompt).to_owned();
    match envelope::verdict(&response, &pending.valid_transitions) {
        Ok((verdict, reasoning)) => Step::Done(Finish::ok(
            json!({ "verdict": verdict, "reasoning": reasoning, "raw": response }),
            verdict,
        )),
        Err(reason) => {
            let max = node.config.get("maxAttempts").and_then(Value::as_u64).unwrap_or(3) as u32;
            if attempts >= max {
                return Step::Done(Finish::failed(
                    json!({ "raw": response, "error": reason }),
                    format!("{attempts} invalid judge responses (last: {reason})"),
                    None,
                ));
            }
            engine.notice = Some(Rejection::new(
                "invalid_response",
                format!(
                    "invalid judge response ({reason}); answer the same pending step again with a JSON object \
                     whose verdict is one of: {} ({} of {max} attempts used)",
                    pending.valid_transitions.join(", "),
                    attempts
                ),
            ));
            let mut step = pending.clone();
            step.prompt = format!("{base}\n\nYour previous response was invalid: {reason}.");
            step.attempt = attempts;
            Step::Pause(step)
        }
    }
}

pub(super) fn human_enter(engine: &mut Engine<'_>, node: &Node) -> Step {
    let prompt = match render::text(engine, node.config_str("prompt").unwrap_or_default(), &[]) {
        Ok(prompt) => prompt,
        Err(finish) => return Step::Done(finish),
    };
    let valid: Vec<String> =
        node.transitions.iter().map(|t| t.event.clone()).filter(|e| e != "timeout").collect();
    let labels = node.config.get("labels");
    let options: Vec<String> = valid
        .iter()
        .enumerate()
        .map(|(i, event)| match labels.and_then(|l| l.get(event)).and_then(Value::as_str) {
            Some(label) => format!("{}. {event} — {label}", i + 1),
            None => format!("{}. {event}", i + 1),
        })
        .collect();
    let full = format!("{prompt}\n\nOptions:\n{}", options.join("\n"));
    engine.run.open.as_mut().expect("open").input = Some(json!({ "prompt": prompt }));
    let mut step = engine.pending(node, full, valid);
    step.allow_comment = node.config.get("allowComment").and_then(Value::as_bool).filter(|allowed| !allowed);
    Step::Pause(step)
}

pub(super) fn human_answer(
    node: &Node,
    pending: &PendingStep,
    transition: String,
    comment: Option<String>,
    decided_by: String,
    principal: String,
) -> Result<Step, Rejection> {
    let valid = &pending.valid_transitions;
    let given = transition.trim();
    let choice = valid
        .iter()
        .find(|v| v.as_str() == given)
        .or_else(|| valid.iter().find(|v| v.eq_ignore_ascii_case(given)))
        .or_else(|| given.parse::<usize>().ok().and_then(|n| n.checked_sub(1)).and_then(|i| valid.get(i)))
        .ok_or_else(|| {
            Rejection::new(
                "invalid_transition",
                format!(
                    "'{given}' is not a valid transition for '{}'; ask the user to choose one of: {}",
                    node.id,
                    valid.join(", ")
                ),
            )
            .with("validTransitions", json!(valid))
        })?;
    let allow_comment = node.config.get("allowComment").and_then(Value::as_bool).unwrap_or(true);
    let mut output = json!({ "choice": choice, "decidedBy": decided_by, "principal": principal });
    if let Some(comment) = comment.filter(|_| allow_comment) {
        output["comment"] = json!(comment);
    }
    Ok(Step::Done(Finish::ok(output, choice.clone())))
}
