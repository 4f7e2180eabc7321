//! The `map` executor (§7.7): one branch per item, then an optional reduce.
//!
//! Items come from a list, a template rendering to a JSON array, or an `extract` phase (one agent turns text into
//! the list). The `map` phase hands one prompt per item (`{{ item }}`, `{{ index }}`); an empty response is a failed
//! branch. `reduce`, when configured and at least one branch succeeded, gets `{{ results }}` (the successful
//! branches). The node succeeds when at least `minSuccess` branches did.

use serde_json::{Value, json};

use super::handback::text_output;
use super::render;
use super::{AgentSpec, Engine, Finish, PendingStep, Rejection, RunStatus, Step};
use crate::definition::Node;

const DEFAULT_MAX_ITEMS: usize = 20;
const LIST_INSTRUCTION: &str = "Respond with ONLY a JSON array: one element per item.";

pub(super) fn enter(engine: &mut Engine<'_>, node: &Node) -> Step {
    let model = match node.config_str("model") {
        Some(m) => engine.run.models.resolve(m),
        None => engine.run.models.for_node(&engine.run.workflow, node),
    };
    let open = engine.run.open.as_mut().expect("open");
    open.model = Some(model.clone());
    open.phase_state = json!({ "model": model });
    let extract = node.config.get("extract");
    let items = match node.config.get("items") {
        Some(items) => match render::value(engine, items) {
            Ok(v) => v,
            Err(finish) => return Step::Done(finish),
        },
        None => Value::Null,
    };
    let list = match &items {
        Value::Array(list) => Some(list.clone()),
        Value::String(text) => match serde_json::from_str::<Value>(text.trim()) {
            Ok(Value::Array(list)) => Some(list),
            _ => None,
        },
        _ => None,
    };
    match list {
        Some(list) if extract.is_none() => branches(engine, node, list),
        _ => {
            let text = items.as_str().map(str::to_owned).unwrap_or_else(|| if items.is_null() { String::new() } else { items.to_string() });
            let intro = match extract.and_then(|e| e.get("prompt")).and_then(Value::as_str) {
                Some(p) => match render::text(engine, p, &[]) {
                    Ok(p) => p,
                    Err(finish) => return Step::Done(finish),
                },
                None => "Split the text below into the list of items to process.".to_owned(),
            };
            let prompt = format!("{intro} {LIST_INSTRUCTION}\n\n{text}");
            let model = extract.and_then(|e| e.get("model")).and_then(Value::as_str).map(|m| engine.run.models.resolve(m)).unwrap_or(model);
            pause(engine, node, "extract", vec![AgentSpec { model, prompt, index: None }])
        }
    }
}

fn pause(engine: &mut Engine<'_>, node: &Node, phase: &str, agents: Vec<AgentSpec>) -> Step {
    let open = engine.run.open.as_mut().expect("open");
    open.phase = Some(phase.to_owned());
    open.phase_state["agents"] = json!(agents);
    let valid = node.transitions.iter().map(|t| t.event.clone()).collect();
    let prompt = format!(
        "Map {phase} step: run exactly {} independent subagent(s), subagent i on agents[i].prompt with \
         agents[i].model, and call advance_map with `responses`: each raw response, in agent order.",
        agents.len()
    );
    let mut step = engine.pending(node, prompt, valid);
    step.map_phase = Some(phase.to_owned());
    step.agent_count = Some(agents.len());
    step.agents = Some(agents);
    Step::Pause(step)
}

fn branches(engine: &mut Engine<'_>, node: &Node, mut items: Vec<Value>) -> Step {
    let max = node.config.get("maxItems").and_then(Value::as_u64).map_or(DEFAULT_MAX_ITEMS, |m| m as usize);
    if items.len() > max {
        let dropped = items.len() - max;
        items.truncate(max);
        render::warn(engine, vec![format!("{dropped} item(s) beyond maxItems ({max}) were dropped")]);
    }
    engine.run.open.as_mut().expect("open").phase_state["items"] = json!(items);
    if items.is_empty() {
        return Step::Done(Finish::ok(json!({ "items": [], "results": [], "succeeded": 0, "failed": 0 }), "success"));
    }
    let model = engine.run.open.as_ref().expect("open").phase_state["model"].as_str().unwrap_or_default().to_owned();
    let prompts = match render::per_item(engine, node.config_str("prompt").unwrap_or_default(), &items) {
        Ok(prompts) => prompts,
        Err(finish) => return Step::Done(finish),
    };
    let agents = prompts.into_iter().map(|prompt| AgentSpec { model: model.clone(), prompt, index: None }).collect();
    pause(engine, node, "map", agents)
}

pub(super) fn answer(
    engine: &mut Engine<'_>,
    node: &Node,
    pending_step: &PendingStep,
    responses: Vec<String>,
) -> Result<Step, Rejection> {
    let agents = engine.count_responses(pending_step, &responses)?;
    let phase = pending_step.map_phase.clone().unwrap_or_default();
    let state = engine.run.open.as_ref().expect("open").phase_state.clone();
    match phase.as_str() {
        "extract" => {
            let text = responses.into_iter().next().unwrap_or_default();
            let list = text
                .find('[')
                .zip(text.rfind(']'))
                .and_then(|(s, e)| serde_json::from_str::<Value>(&text[s..=e]).ok())
                .and_then(|v| v.as_array().cloned());
            let status = if list.is_some() { RunStatus::Completed } else { RunStatus::Failed };
            let child = engine.child_record("map_extract", status, json!({ "prompt": agents[0].prompt }), json!({ "text": text }), None);
            engine.records.push(child);
            Ok(match list {
                Some(items) => branches(engine, node, items),
                None => Step::Done(Finish::failed(json!({ "raw": text }), "the extract response holds no JSON array of items", None)),
            })
        }
        "map" => {
            let items = state["items"].as_array().cloned().unwrap_or_default();
            let mut results = Vec::new();
            for (index, (agent, response)) in agents.iter().zip(&responses).enumerate() {
                let ok = !response.trim().is_empty();
                let item = items.get(index).cloned().unwrap_or(Value::Null);
                let output = text_output(response);
                let status = if ok { RunStatus::Completed } else { RunStatus::Failed };
                let error = (!ok).then(|| "empty response".to_owned());
                let child = engine.child_record("map_branch", status, json!({ "prompt": agent.prompt, "item": item }), output.clone(), error);
                engine.records.push(child);
                results.push(json!({ "index": index, "item": item, "output": output, "ok": ok }));
            }
            let succeeded = results.iter().filter(|r| r["ok"] == json!(true)).count();
            engine.run.open.as_mut().expect("open").phase_state["results"] = json!(results);
            if let Some(reduce) = node.config.get("reduce").filter(|_| succeeded > 0) {
                let good: Vec<&Value> = results.iter().filter(|r| r["ok"] == json!(true)).collect();
                let prompt = match render::text(engine, reduce.get("prompt").and_then(Value::as_str).unwrap_or_default(), &[("results", json!(good))]) {
                    Ok(p) => p,
                    Err(finish) => return Ok(Step::Done(finish)),
                };
                let model = reduce
                    .get("model")
                    .and_then(Value::as_str)
                    .map(|m| engine.run.models.resolve(m))
                    .unwrap_or_else(|| state["model"].as_str().unwrap_or_default().to_owned());
                return Ok(pause(engine, node, "reduce", vec![AgentSpec { model, prompt, index: None }]));
            }
            Ok(Step::Done(done(node, &state["items"], results, None)))
        }
        _ => {
            let text = responses.into_iter().next().unwrap_or_default();
            let reduced = text_output(&text);
            let child = engine.child_record("map_reduce", RunStatus::Completed, json!({ "prompt": agents[0].prompt }), reduced.clone(), None);
            engine.records.push(child);
            let results = state["results"].as_array().cloned().unwrap_or_default();
            Ok(Step::Done(done(node, &state["items"], results, Some(reduced))))
        }
    }
}

fn done(node: &Node, items: &Value, results: Vec<Value>, reduced: Option<Value>) -> Finish {
    let succeeded = results.iter().filter(|r| r["ok"] == json!(true)).count();
    let failed = results.len() - succeeded;
    let mut output = json!({ "items": items, "results": results, "succeeded": succeeded, "failed": failed });
    if let Some(reduced) = reduced {
        output["text"] = reduced["text"].clone();
        output["reduced"] = reduced;
    }
    let min = node.config.get("minSuccess").and_then(Value::as_u64).unwrap_or(1) as usize;
    if succeeded >= min {
        Finish::ok(output, "success")
    } else {
        Finish::failed(output, format!("{succeeded} branch(es) succeeded, fewer than minSuccess ({min})"), None)
    }
}
