//! The `consensus` executor (§7.5): several independent agents answer, the node decides.
//!
//! `gate` (judge envelopes, verdicts tallied) and `answer` (`{reasoning, answer}`, normalized answers tallied) decide
//! with the quorum rule; invalid agents are re-asked (`consensusPhase: "retry"`, only those agents) only when their
//! missing votes could still change the decision, else they abstain. `most_consistent` collects free prose
//! (`generate`), then one aggregator picks the most consistent response by index (`aggregate`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::envelope;
use super::render;
use super::{AgentSpec, Engine, Finish, PendingStep, Rejection, RunStatus, Step};
use crate::definition::Node;

fn instruction(mode: &str, count: usize) -> String {
    let what = match mode {
        "most_consistent" => "each returns its answer as free prose",
        "answer" => "each returns the JSON object its prompt asks for",
        _ => "each returns the JSON verdict object its prompt asks for",
    };
    format!(
        "Consensus step: spawn {count} independent subagents (none may see another's answer), each running \
         agents[i].prompt on agents[i].model; {what}. Then call advance_consensus with `responses`: every raw \
         response, in agent order ({count} in all)."
    )
}

pub(super) fn enter(engine: &mut Engine<'_>, node: &Node) -> Step {
    let mode = node.config_str("mode").unwrap_or("gate").to_owned();
    let base = match render::text(engine, node.config_str("prompt").unwrap_or_default(), &[]) {
        Ok(prompt) => prompt,
        Err(finish) => return Step::Done(finish),
    };
    let model = engine.run.models.for_node(&engine.run.workflow, node);
    let choices = node.choices();
    let suffix = match mode.as_str() {
        "gate" => format!("\n\n{}", envelope::judge_instruction(&choices)),
        "answer" => "\n\nRespond with ONLY a JSON object: {\"reasoning\": \"<short reasoning>\", \"answer\": \"<short \
                     answer>\"}"
            .to_owned(),
        _ => String::new(),
    };
    let mut agents = Vec::new();
    if let Some(configured) = node.config.get("agents").and_then(Value::as_array) {
        for agent in configured {
            let prompt = match agent.get("prompt").and_then(Value::as_str) {
                Some(p) => match render::text(engine, p, &[]) {
                    Ok(p) => p,
                    Err(finish) => return Step::Done(finish),
                },
                None => base.clone(),
            };
            let prompt = match agent.get("persona").and_then(Value::as_str) {
                Some(persona) => format!("{persona}\n\n{prompt}"),
                None => prompt,
            };
            let agent_model = agent
                .get("model")
                .and_then(Value::as_str)
                .map(|m| engine.run.models.resolve(m))
                .unwrap_or_else(|| model.clone());
            agents.push(AgentSpec { model: agent_model, prompt: prompt + &suffix, index: None });
        }
    } else {
        let count = node.config.get("agentCount").and_then(Value::as_u64).unwrap_or(3) as usize;
        for _ in 0..count {
            agents.push(AgentSpec { model: model.clone(), prompt: format!("{base}{suffix}"), index: None });
        }
    }
    let n = agents.len();
    let quorum = match node.config.get("quorum") {
        Some(Value::Number(q)) if q.is_u64() => q.as_u64().unwrap_or(1) as usize,
        Some(Value::Number(q)) => (q.as_f64().unwrap_or(0.5) * n as f64).ceil() as usize,
        _ => n / 2 + 1,
    };
    let open = engine.run.open.as_mut().expect("open");
    open.model = Some(model.clone());
    open.phase = Some("generate".into());
    open.input = Some(json!({ "prompt": base, "agents": agents }));
    open.phase_state = json!({
        "mode": mode,
        "quorum": quorum,
        "choices": choices,
        "agents": agents,
        "votes": vec![Value::Null; n],
        "retriesLeft": node.config.get("maxRetries").and_then(Value::as_u64).unwrap_or(1),
        "model": model,
        "base": base,
    });
    Step::Pause(pending(engine, node, "generate", agents))
}

fn pending(engine: &Engine<'_>, node: &Node, phase: &str, agents: Vec<AgentSpec>) -> PendingStep {
    let state = &engine.run.open.as_ref().expect("open").phase_state;
    let mode = state["mode"].as_str().unwrap_or("gate");
    let valid: Vec<String> = node.transitions.iter().map(|t| t.event.clone()).collect();
    let mut step = engine.pending(node, instruction(mode, agents.len()), valid);
    step.agent_count = Some(agents.len());
    let first = agents.first().map(|a| a.model.clone());
    if agents.iter().all(|a| Some(&a.model) == first.as_ref()) {
        step.model = first;
    }
    step.agents = Some(agents);
    step.consensus_phase = Some(phase.to_owned());
    step
}

pub(super) fn answer(
    engine: &mut Engine<'_>,
    node: &Node,
    pending_step: &PendingStep,
    responses: Vec<String>,
) -> Result<Step, Rejection> {
    let agents = engine.count_responses(pending_step, &responses)?;
    let state = engine.run.open.as_ref().expect("open").phase_state.clone();
    let mode = state["mode"].as_str().unwrap_or("gate").to_owned();
    let phase = pending_step.consensus_phase.clone().unwrap_or_default();
    if mode == "most_consistent" {
        return Ok(most_consistent(engine, node, pending_step, &phase, &agents, responses));
    }
    let choices: Vec<String> =
        state["choices"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
    let mut votes = state["votes"].as_array().cloned().unwrap_or_default();
    for (i, (agent, raw)) in agents.iter().zip(&responses).enumerate() {
        let index = agent.index.unwrap_or(i);
        let vote = if mode == "answer" { read_answer(raw) } else { envelope::verdict(raw, &choices) };
        let (record, status, error) = match vote {
            Ok((value, reasoning)) => {
                let key = if mode == "answer" { "answer" } else { "verdict" };
                let mut v = json!({ "index": index, "model": agent.model, "reasoning": reasoning, "valid": true, "raw": raw });
                v[key] = json!(value);
                (v, RunStatus::Completed, None)
            }
            Err(reason) => (
                json!({ "index": index, "model": agent.model, "valid": false, "error": reason, "raw": raw }),
                RunStatus::Failed,
                Some(reason),
            ),
        };
        let child = engine.child_record("consensus_agent", status, json!({ "prompt": agent.prompt }), record.clone(), error);
        engine.records.push(child);
        if index < votes.len() {
            votes[index] = record;
        }
    }
    let quorum = state["quorum"].as_u64().unwrap_or(1) as usize;
    let key = if mode == "answer" { "answer" } else { "verdict" };
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut first_written: BTreeMap<String, String> = BTreeMap::new();
    for vote in votes.iter().filter(|v| v["valid"] == json!(true)) {
        let value = vote[key].as_str().unwrap_or_default();
        let normal = if mode == "answer" { normalize(value) } else { value.to_owned() };
        *counts.entry(normal.clone()).or_default() += 1;
        first_written.entry(normal).or_insert_with(|| value.to_owned());
    }
    let invalid: Vec<usize> =
        votes.iter().enumerate().filter(|(_, v)| v["valid"] != json!(true)).map(|(i, _)| i).collect();
    let options: Vec<String> = if mode == "answer" { counts.keys().cloned().collect() } else { choices.clone() };
    let settled = is_settled(&counts, invalid.len(), &options, mode == "answer", quorum);
    let retries_left = state["retriesLeft"].as_u64().unwrap_or(0);
    let open = engine.run.open.as_mut().expect("open");
    open.phase_state["votes"] = json!(votes);
    if !settled && retries_left > 0 {
        open.phase_state["retriesLeft"] = json!(retries_left - 1);
        open.phase = Some("retry".into());
        let all: Vec<AgentSpec> = serde_json::from_value(state["agents"].clone()).unwrap_or_default();
        let retry: Vec<AgentSpec> = invalid
            .iter()
            .filter_map(|&i| {
                all.get(i).map(|a| AgentSpec {
                    model: a.model.clone(),
                    prompt: format!(
                        "{}\n\nA previous answer was invalid: {}. Answer again with ONLY the JSON object.",
                        a.prompt,
                        votes[i]["error"].as_str().unwrap_or("invalid")
                    ),
                    index: Some(i),
                })
            })
            .collect();
        return Ok(Step::Pause(pending(engine, node, "retry", retry)));
    }
    let decision = decide(&counts, quorum);
    let votes_out: serde_json::Map<String, Value> = counts.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    let decision_text = decision.as_ref().map(|d| first_written.get(d).cloned().unwrap_or_else(|| d.clone()));
    let mut output = json!({
        "mode": mode,
        "decision": decision_text,
        "votes": votes_out,
        "quorum": quorum,
        "agentCount": votes.len(),
        "settledEarly": settled && !invalid.is_empty(),
        "agents": votes,
    });
    let event = match (&decision_text, mode.as_str()) {
        (Some(answer), "answer") => {
            output["answer"] = json!(answer);
            "consensus".to_owned()
        }
        (Some(verdict), _) => verdict.clone(),
        (None, _) => "no_consensus".to_owned(),
    };
    if event == "no_consensus" && node.target("no_consensus").is_none() {
        return Ok(Step::Done(Finish::failed(output, "the agents reached no consensus", None)));
    }
    Ok(Step::Done(Finish::ok(output, event)))
}

fn read_answer(raw: &str) -> Result<(String, Option<String>), String> {
    let map = envelope::object(raw)?;
    let answer = match map.get("answer") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_owned(),
        Some(Value::Number(n)) => n.to_string(),
        _ => return Err("the JSON object has no \"answer\"".into()),
    };
    Ok((answer, map.get("reasoning").and_then(Value::as_str).map(str::to_owned)))
}

/// Trimmed, lower-cased, whitespace collapsed; numeric strings canonicalized.
fn normalize(answer: &str) -> String {
    let text = answer.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    match text.parse::<f64>() {
        Ok(n) if n.is_finite() => serde_json::Number::from_f64(n).map(|n| n.to_string()).unwrap_or(text),
        _ => text,
    }
}

/// The quorum rule: the one verdict at or above quorum (the most voted if several, none on a tie).
fn decide(counts: &BTreeMap<String, usize>, quorum: usize) -> Option<String> {
    let mut winners: Vec<(&String, usize)> = counts.iter().filter(|(_, c)| **c >= quorum).map(|(k, c)| (k, *c)).collect();
    winners.sort_by_key(|w| std::cmp::Reverse(w.1));
    match winners.as_slice() {
        [] => None,
        [(only, _)] => Some((*only).clone()),
        [(a, ca), (_, cb), ..] if ca > cb => Some((*a).clone()),
        _ => None,
    }
}

/// Whether every way `missing` votes could fall (over `options`, a new distinct answer in answer mode, or abstain)
/// leads to the same decision.
fn is_settled(counts: &BTreeMap<String, usize>, missing: usize, options: &[String], answer_mode: bool, quorum: usize) -> bool {
    if missing == 0 {
        return true;
    }
    let mut options: Vec<String> = options.to_vec();
    if answer_mode {
        options.push("\u{0}new".into());
    }
    let now = decide(counts, quorum);
    let mut same = true;
    distribute(&mut counts.clone(), &options, 0, missing, quorum, &now, &mut same);
    same
}

fn distribute(
    counts: &mut BTreeMap<String, usize>,
    options: &[String],
    from: usize,
    left: usize,
    quorum: usize,
    expected: &Option<String>,
    same: &mut bool,
) {
    if !*same {
        return;
    }
    if decide(counts, quorum) != *expected {
        *same = false;
        return;
    }
    if left == 0 {
        return;
    }
    for i in from..options.len() {
        *counts.entry(options[i].clone()).or_default() += 1;
        distribute(counts, options, i, left - 1, quorum, expected, same);
        *counts.get_mut(&options[i]).expect("just added") -= 1;
    }
}

fn most_consistent(
    engine: &mut Engine<'_>,
    node: &Node,
    pending_step: &PendingStep,
    phase: &str,
    agents: &[AgentSpec],
    responses: Vec<String>,
) -> Step {
    let state = engine.run.open.as_ref().expect("open").phase_state.clone();
    if phase == "aggregate" {
        let kept: Vec<String> =
            state["responses"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
        let raw = responses.into_iter().next().unwrap_or_default();
        let read = envelope::object(&raw).and_then(|map| {
            let index = map.get("index").and_then(Value::as_u64).ok_or("the JSON object has no integer \"index\"")?;
            let index = index as usize;
            if index >= kept.len() {
                return Err(format!("index {index} is out of range 0..{}", kept.len() - 1));
            }
            Ok((index, map.get("reasoning").and_then(Value::as_str).map(str::to_owned)))
        });
        let child_status = if read.is_ok() { RunStatus::Completed } else { RunStatus::Failed };
        let child = engine.child_record(
            "consensus_aggregate",
            child_status,
            json!({ "prompt": agents.first().map(|a| a.prompt.clone()) }),
            json!({ "raw": raw }),
            read.as_ref().err().cloned(),
        );
        engine.records.push(child);
        return match read {
            Ok((index, reasoning)) => Step::Done(Finish::ok(
                json!({ "answer": kept[index], "text": kept[index], "index": index, "reasoning": reasoning, "responses": kept }),
                "success",
            )),
            Err(reason) => {
                let open = engine.run.open.as_mut().expect("open");
                let tries = open.phase_state["aggregateAttempts"].as_u64().unwrap_or(0) + 1;
                open.phase_state["aggregateAttempts"] = json!(tries);
                if tries >= 2 {
                    return Step::Done(Finish::failed(json!({ "responses": kept, "raw": raw }), format!("invalid aggregate response: {reason}"), None));
                }
                engine.notice = Some(Rejection::new("invalid_response", format!("invalid aggregate response ({reason}); answer again")));
                let mut step = pending_step.clone();
                if let Some(agent) = step.agents.as_mut().and_then(|a| a.first_mut()) {
                    agent.prompt = format!("{}\n\nYour previous response was invalid: {reason}.", agent.prompt);
                }
                step.attempt += 1;
                Step::Pause(step)
            }
        };
    }
    for (agent, response) in agents.iter().zip(&responses) {
        let status = if response.trim().is_empty() { RunStatus::Failed } else { RunStatus::Completed };
        let child = engine.child_record("consensus_agent", status, json!({ "prompt": agent.prompt }), json!({ "text": response }), None);
        engine.records.push(child);
    }
    let kept: Vec<String> = responses.into_iter().filter(|r| !r.trim().is_empty()).collect();
    match kept.len() {
        0 => Step::Done(Finish::failed(json!({ "responses": [] }), "every agent returned an empty response", None)),
        1 => Step::Done(Finish::ok(
            json!({ "answer": kept[0], "text": kept[0], "index": 0, "reasoning": null, "responses": kept }),
            "success",
        )),
        _ => {
            let listed: Vec<String> = kept.iter().enumerate().map(|(i, r)| format!("[{i}] {r}")).collect();
            let aggregate = node.config.get("aggregate");
            let model = aggregate
                .and_then(|a| a.get("model"))
                .and_then(Value::as_str)
                .map(|m| engine.run.models.resolve(m))
                .unwrap_or_else(|| state["model"].as_str().unwrap_or_default().to_owned());
            let intro = aggregate.and_then(|a| a.get("prompt")).and_then(Value::as_str).unwrap_or(
                "Several independent answers to the same task follow. Pick the one most consistent with the others.",
            );
            let prompt = format!(
                "{intro}\n\nTask:\n{}\n\nResponses:\n{}\n\nRespond with ONLY a JSON object: {{\"reasoning\": \
                 \"<short reasoning>\", \"index\": <0-based index of the chosen response>}}",
                state["base"].as_str().unwrap_or_default(),
                listed.join("\n\n")
            );
            let open = engine.run.open.as_mut().expect("open");
            open.phase = Some("aggregate".into());
            open.phase_state["responses"] = json!(kept);
            Step::Pause(pending(engine, node, "aggregate", vec![AgentSpec { model, prompt, index: None }]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    }

    #[test]
    fn quorum_rule() {
        assert_eq!(decide(&counts(&[("approve", 3), ("reject", 1)]), 3), Some("approve".into()));
        assert_eq!(decide(&counts(&[("approve", 2), ("reject", 2)]), 2), None);
        assert_eq!(decide(&counts(&[("approve", 3), ("reject", 2)]), 2), Some("approve".into()));
        assert_eq!(decide(&counts(&[("approve", 1)]), 2), None);
    }

    #[test]
    fn retry_only_when_missing_votes_could_change_the_outcome() {
        let options = vec!["approve".to_owned(), "reject".to_owned()];
        // Conformance 14: 5 agents, quorum 3.
        assert!(is_settled(&counts(&[("approve", 3)]), 2, &options, false, 3));
        assert!(!is_settled(&counts(&[("approve", 2), ("reject", 1)]), 2, &options, false, 3));
        assert!(is_settled(&counts(&[("approve", 1)]), 0, &options, false, 3));
    }

    #[test]
    fn answers_normalize() {
        assert_eq!(normalize("  Forty  Two "), "forty two");
        assert_eq!(normalize("42.0"), normalize("42"));
    }
}
