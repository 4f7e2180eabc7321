//! The `round_robin` executor (§7.6): a pairwise tournament over candidates.
//!
//! Candidates come from a literal list, a template that renders to a JSON array, or a `resolve` phase (one agent
//! turns text, or `candidatesPrompt`, into the list). `first` judges every unordered pair once (`m1`, `m2`, … in
//! (i, j) order); `contested` mode then re-judges the pairs below `contestThreshold` with A and B swapped (`r<k>`).
//! Verdicts arrive in waves keyed by matchup id; invalid entries are listed as `rejected`. The winner: score (win 1,
//! draw 0.5) → net margin → head-to-head between exactly two tied → original order; a pair whose two judgments
//! disagree is a draw.

use serde_json::{Map, Value, json};

use super::envelope;
use super::render;
use super::{Engine, Finish, Matchup, PendingStep, Rejection, RunStatus, Step};
use crate::definition::Node;

const DEFAULT_MAX_CANDIDATES: usize = 8;

pub(super) fn enter(engine: &mut Engine<'_>, node: &Node) -> Step {
    let criterion = match render::text(engine, node.config_str("criterion").unwrap_or_default(), &[]) {
        Ok(c) => c,
        Err(finish) => return Step::Done(finish),
    };
    let model = engine.run.models.for_node(&engine.run.workflow, node);
    let open = engine.run.open.as_mut().expect("open");
    open.model = Some(model.clone());
    open.phase_state = json!({ "criterion": criterion, "model": model, "verdicts": {} });
    if let Some(prompt) = node.config_str("candidatesPrompt") {
        return match render::text(engine, prompt, &[]) {
            Ok(prompt) => resolve(engine, node, format!("{prompt}\n\n{}", LIST_INSTRUCTION)),
            Err(finish) => Step::Done(finish),
        };
    }
    let value = match render::value(engine, node.config.get("candidates").unwrap_or(&Value::Null)) {
        Ok(v) => v,
        Err(finish) => return Step::Done(finish),
    };
    match as_list(&value) {
        Some(candidates) => start(engine, node, candidates),
        None => {
            let text = value.as_str().unwrap_or_default();
            resolve(engine, node, format!("Extract the candidates from the text below. {LIST_INSTRUCTION}\n\n{text}"))
        }
    }
}

const LIST_INSTRUCTION: &str = "Respond with ONLY a JSON array of candidate strings.";

/// A JSON array (or text holding one) as candidate strings.
fn as_list(value: &Value) -> Option<Vec<String>> {
    let list = match value {
        Value::Array(items) => items.clone(),
        Value::String(text) => match serde_json::from_str::<Value>(text.trim()) {
            Ok(Value::Array(items)) => items,
            _ => return None,
        },
        _ => return None,
    };
    Some(list.into_iter().map(|v| v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string())).collect())
}

fn resolve(engine: &mut Engine<'_>, node: &Node, prompt: String) -> Step {
    let model = engine.run.open.as_ref().expect("open").phase_state["model"].as_str().unwrap_or_default().to_owned();
    let open = engine.run.open.as_mut().expect("open");
    open.phase = Some("resolve".into());
    let valid = node.transitions.iter().map(|t| t.event.clone()).collect();
    let mut step = engine.pending(
        node,
        "Round-robin resolve step: run one subagent on agents[0].prompt and pass its text to advance_round_robin as \
         `result`."
            .into(),
        valid,
    );
    step.round_robin_phase = Some("resolve".into());
    step.agent_count = Some(1);
    step.model = Some(model.clone());
    step.agents = Some(vec![super::AgentSpec { model, prompt, index: None }]);
    Step::Pause(step)
}

fn start(engine: &mut Engine<'_>, node: &Node, candidates: Vec<String>) -> Step {
    let max = node.config.get("maxCandidates").and_then(Value::as_u64).map_or(DEFAULT_MAX_CANDIDATES, |m| m as usize);
    if candidates.len() > max {
        return Step::Done(Finish::failed(
            json!({ "candidates": candidates }),
            format!("{} candidates is more than maxCandidates ({max})", candidates.len()),
            Some("too_many_candidates"),
        ));
    }
    if candidates.is_empty() {
        return Step::Done(Finish::failed(json!({ "candidates": [] }), "there are no candidates", None));
    }
    let state = &mut engine.run.open.as_mut().expect("open").phase_state;
    state["candidates"] = json!(candidates);
    let criterion = state["criterion"].as_str().unwrap_or_default().to_owned();
    let mut matchups = Vec::new();
    for i in 0..candidates.len() {
        for j in i + 1..candidates.len() {
            let id = format!("m{}", matchups.len() + 1);
            matchups.push(matchup(&criterion, &candidates, id, i, j, None));
        }
    }
    state["matchups"] = json!(matchups);
    if candidates.len() == 1 {
        return Step::Done(Finish::ok(result(engine), "success"));
    }
    engine.run.open.as_mut().expect("open").phase = Some("first".into());
    Step::Pause(pending(engine, node, "first"))
}

fn matchup(criterion: &str, candidates: &[String], id: String, a: usize, b: usize, reversed_of: Option<String>) -> Value {
    let prompt = format!(
        "Criterion: {criterion}\n\nCandidate A:\n{}\n\nCandidate B:\n{}\n\nWhich candidate better satisfies the \
         criterion? No ties. Respond with ONLY a JSON object: {{\"winner\": \"A\" or \"B\", \"margin\": <integer 0-100, \
         how decisive>, \"reasoning\": \"<short reasoning>\"}}",
        candidates[a], candidates[b]
    );
    json!({ "id": id, "a": a, "b": b, "prompt": prompt, "reversedOf": reversed_of })
}

/// Matchups without a verdict yet, as the host sees them.
fn outstanding(engine: &Engine<'_>) -> Vec<Matchup> {
    let state = &engine.run.open.as_ref().expect("open").phase_state;
    let candidates = candidates(state);
    state["matchups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| state["verdicts"].get(m["id"].as_str().unwrap_or_default()).is_none())
        .map(|m| Matchup {
            id: m["id"].as_str().unwrap_or_default().to_owned(),
            a: candidates[m["a"].as_u64().unwrap_or(0) as usize].clone(),
            b: candidates[m["b"].as_u64().unwrap_or(0) as usize].clone(),
            prompt: m["prompt"].as_str().unwrap_or_default().to_owned(),
            reversed_of: m["reversedOf"].as_str().map(str::to_owned),
        })
        .collect()
}

fn candidates(state: &Value) -> Vec<String> {
    state["candidates"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
}

fn pending(engine: &Engine<'_>, node: &Node, phase: &str) -> PendingStep {
    let state = &engine.run.open.as_ref().expect("open").phase_state;
    let matchups = outstanding(engine);
    let valid = node.transitions.iter().map(|t| t.event.clone()).collect();
    let prompt = format!(
        "Round-robin {phase} step: spawn one independent subagent per matchup ({}), each running matchups[i].prompt \
         on `model`: it must pick A or B (no ties) with a 0-100 decisiveness margin and answer {{\"winner\": \"A\"|\"B\", \
         \"margin\": N, \"reasoning\": \"...\"}}. Call advance_round_robin with `verdicts` keyed by matchup id; you \
         may submit waves as they complete.",
        matchups.len()
    );
    let mut step = engine.pending(node, prompt, valid);
    step.round_robin_phase = Some(phase.to_owned());
    step.criterion = state["criterion"].as_str().map(str::to_owned);
    step.model = state["model"].as_str().map(str::to_owned);
    step.agent_count = Some(matchups.len());
    step.matchups = Some(matchups);
    step
}

pub(super) fn answer(
    engine: &mut Engine<'_>,
    node: &Node,
    pending_step: &PendingStep,
    verdicts: Option<Map<String, Value>>,
    result_text: Option<String>,
) -> Result<Step, Rejection> {
    let phase = pending_step.round_robin_phase.clone().unwrap_or_default();
    if phase == "resolve" {
        let text = result_text.ok_or_else(|| {
            Rejection::new("invalid_input", "the resolve phase needs `result`: the subagent's text")
        })?;
        let agent = pending_step.agents.as_ref().and_then(|a| a.first()).cloned();
        if let Some(agent) = &agent {
            engine.charge(&agent.model, &agent.prompt, &text);
        }
        let open = engine.run.open.as_mut().expect("open");
        open.attempts += 1;
        let list = text.find('[').zip(text.rfind(']')).and_then(|(s, e)| as_list(&Value::String(text[s..=e].to_owned())));
        let child_status = if list.is_some() { RunStatus::Completed } else { RunStatus::Failed };
        let child = engine.child_record("round_robin_resolve", child_status, json!({}), json!({ "text": text }), None);
        engine.records.push(child);
        return Ok(match list {
            Some(candidates) => start(engine, node, candidates),
            None if engine.run.open.as_ref().expect("open").attempts < 2 => {
                engine.notice = Some(Rejection::new(
                    "invalid_response",
                    "the resolve result holds no JSON array of candidates; run the subagent again",
                ));
                let mut step = pending_step.clone();
                step.attempt += 1;
                Step::Pause(step)
            }
            None => Step::Done(Finish::failed(json!({ "raw": text }), "the candidates could not be resolved", None)),
        });
    }
    let verdicts = verdicts.ok_or_else(|| {
        Rejection::new("invalid_input", format!("the {phase} phase needs `verdicts`: {{ \"<matchup id>\": {{winner, margin}} }}"))
    })?;
    let open = engine.run.open.as_mut().expect("open");
    open.attempts += 1;
    let state = open.phase_state.clone();
    let known: Vec<String> =
        state["matchups"].as_array().into_iter().flatten().filter_map(|m| m["id"].as_str().map(str::to_owned)).collect();
    let model = state["model"].as_str().unwrap_or_default().to_owned();
    let mut rejected = Vec::new();
    let mut accepted = 0;
    for (id, given) in verdicts {
        if !known.contains(&id) {
            rejected.push(json!({ "id": id, "reason": "unknown matchup id" }));
            continue;
        }
        let verdict = match read_verdict(&given) {
            Ok(v) => v,
            Err(reason) => {
                rejected.push(json!({ "id": id, "reason": reason }));
                continue;
            }
        };
        let recorded = engine.run.open.as_ref().expect("open").phase_state["verdicts"].get(&id).cloned();
        if let Some(existing) = recorded {
            if existing["winner"] != verdict["winner"] || existing["margin"] != verdict["margin"] {
                rejected.push(json!({ "id": id, "reason": "a different verdict for this matchup was already recorded" }));
            }
            continue;
        }
        let prompt = state["matchups"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|m| m["id"] == json!(id))
            .and_then(|m| m["prompt"].as_str())
            .unwrap_or_default()
            .to_owned();
        engine.charge(&model, &prompt, &given.to_string());
        let child = engine.child_record("round_robin_matchup", RunStatus::Completed, json!({ "id": id }), verdict.clone(), None);
        engine.records.push(child);
        engine.run.open.as_mut().expect("open").phase_state["verdicts"][&id] = verdict;
        accepted += 1;
    }
    if !rejected.is_empty() {
        engine.notice = Some(
            Rejection::new(
                "invalid_verdicts",
                format!("{} verdict(s) were rejected (see `rejected`); {accepted} accepted", rejected.len()),
            )
            .with("rejected", Value::Array(rejected)),
        );
    }
    if !outstanding(engine).is_empty() {
        return Ok(Step::Pause(pending(engine, node, &phase)));
    }
    if phase == "first" && node.config_str("mode") == Some("contested") {
        let threshold = node.config.get("contestThreshold").and_then(Value::as_u64).unwrap_or(101);
        let state = &engine.run.open.as_ref().expect("open").phase_state;
        let candidates = candidates(state);
        let criterion = state["criterion"].as_str().unwrap_or_default().to_owned();
        let reversed: Vec<Value> = state["matchups"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| state["verdicts"][m["id"].as_str().unwrap_or_default()]["margin"].as_u64().unwrap_or(0) < threshold)
            .map(|m| {
                let id = m["id"].as_str().unwrap_or_default();
                let (a, b) = (m["a"].as_u64().unwrap_or(0) as usize, m["b"].as_u64().unwrap_or(0) as usize);
                matchup(&criterion, &candidates, format!("r{}", &id[1..]), b, a, Some(id.to_owned()))
            })
            .collect();
        if !reversed.is_empty() {
            let open = engine.run.open.as_mut().expect("open");
            open.phase = Some("contested".into());
            if let Some(list) = open.phase_state["matchups"].as_array_mut() {
                list.extend(reversed);
            }
            return Ok(Step::Pause(pending(engine, node, "contested")));
        }
    }
    Ok(Step::Done(Finish::ok(result(engine), "success")))
}

/// `{winner: "A"|"B", margin: 0..100, reasoning?}` from an object or raw JSON text.
fn read_verdict(given: &Value) -> Result<Value, String> {
    let map = match given {
        Value::Object(map) => map.clone(),
        Value::String(text) => envelope::object(text)?,
        _ => return Err("a verdict must be an object or JSON text".into()),
    };
    let winner = map.get("winner").and_then(Value::as_str).map(|w| w.trim().to_uppercase());
    let winner = match winner.as_deref() {
        Some("A") => "A",
        Some("B") => "B",
        _ => return Err("winner must be \"A\" or \"B\"".into()),
    };
    let margin = map.get("margin").and_then(Value::as_u64).filter(|m| *m <= 100).ok_or("margin must be an integer 0-100")?;
    Ok(json!({ "winner": winner, "margin": margin, "reasoning": map.get("reasoning").and_then(Value::as_str) }))
}

#[derive(Clone, Default)]
struct Standing {
    wins: u32,
    draws: u32,
    losses: u32,
    net: i64,
}

impl Standing {
    fn score(&self) -> f64 {
        f64::from(self.wins) + f64::from(self.draws) * 0.5
    }
}

/// The node output: winner, standings and every matchup.
fn result(engine: &Engine<'_>) -> Value {
    let state = &engine.run.open.as_ref().expect("open").phase_state;
    let candidates = candidates(state);
    let n = candidates.len();
    let mut standings = vec![Standing::default(); n];
    let mut head: Vec<Vec<i8>> = vec![vec![0; n]; n];
    let mut matchups_out = Vec::new();
    let all = state["matchups"].as_array().cloned().unwrap_or_default();
    for m in all.iter().filter(|m| m["reversedOf"].is_null()) {
        let id = m["id"].as_str().unwrap_or_default();
        let (a, b) = (m["a"].as_u64().unwrap_or(0) as usize, m["b"].as_u64().unwrap_or(0) as usize);
        let judged = |m: &Value| {
            let v = &state["verdicts"][m["id"].as_str().unwrap_or_default()];
            let first = m["a"].as_u64().unwrap_or(0) as usize;
            let second = m["b"].as_u64().unwrap_or(0) as usize;
            let winner = if v["winner"] == json!("A") { first } else { second };
            (winner, v["margin"].as_u64().unwrap_or(0) as i64, v["reasoning"].clone())
        };
        let (w1, m1, reasoning) = judged(m);
        let reverse = all.iter().find(|r| r["reversedOf"] == json!(id));
        let (winner, margin) = match reverse.map(judged) {
            Some((w2, _, _)) if w2 != w1 => (None, 0),
            Some((_, m2, _)) => (Some(w1), (m1 + m2) / 2),
            None => (Some(w1), m1),
        };
        match winner {
            Some(w) => {
                let l = if w == a { b } else { a };
                standings[w].wins += 1;
                standings[w].net += margin;
                standings[l].losses += 1;
                standings[l].net -= margin;
                head[w][l] = 1;
                head[l][w] = -1;
            }
            None => {
                standings[a].draws += 1;
                standings[b].draws += 1;
            }
        }
        matchups_out.push(json!({
            "id": id, "a": candidates[a], "b": candidates[b],
            "winner": winner.map(|w| candidates[w].clone()), "margin": margin, "reasoning": reasoning,
        }));
    }
    for r in all.iter().filter(|m| !m["reversedOf"].is_null()) {
        let v = &state["verdicts"][r["id"].as_str().unwrap_or_default()];
        let (a, b) = (r["a"].as_u64().unwrap_or(0) as usize, r["b"].as_u64().unwrap_or(0) as usize);
        let winner = if v["winner"] == json!("A") { a } else { b };
        matchups_out.push(json!({
            "id": r["id"], "a": candidates[a], "b": candidates[b], "winner": candidates[winner],
            "margin": v["margin"], "reasoning": v["reasoning"], "reversedOf": r["reversedOf"],
        }));
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| {
        let (sx, sy) = (&standings[x], &standings[y]);
        sy.score()
            .total_cmp(&sx.score())
            .then(sy.net.cmp(&sx.net))
            .then_with(|| {
                let tied = (0..n)
                    .filter(|&k| standings[k].score() == sx.score() && standings[k].net == sx.net)
                    .count();
                if tied == 2 { head[y][x].cmp(&head[x][y]) } else { std::cmp::Ordering::Equal }
            })
            .then(x.cmp(&y))
    });
    let winner = order.first().copied().unwrap_or(0);
    json!({
        "winner": candidates.get(winner),
        "text": candidates.get(winner),
        "winnerIndex": winner,
        "candidates": candidates,
        "standings": order.iter().map(|&i| json!({
            "index": i, "candidate": candidates[i], "wins": standings[i].wins, "draws": standings[i].draws,
            "losses": standings[i].losses, "score": standings[i].score(), "netMargin": standings[i].net,
        })).collect::<Vec<_>>(),
        "matchups": matchups_out,
    })
}
