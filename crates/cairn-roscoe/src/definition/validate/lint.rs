//! The lint stage of validation, run only on a workflow that passed integrity: non-fatal warnings about states that
//! are unreachable or never end, transitions a node never takes, missing failure routes, fan-out nodes, and (given
//! the facts in `Options`) unknown models, unknown or cyclic subworkflows and unused inputs.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use serde_json::Value;

use super::{Checker, Options, escape};
use crate::definition::diagnostic::{Code, Diagnostic};
use crate::definition::model::{Node, NodeType, Workflow};
use crate::definition::template::Segment;

impl Checker<'_> {
    pub(super) fn lint(&self, options: &Options) -> Vec<Diagnostic> {
        let w = self.w;
        let mut out = Vec::new();
        let node_diag = |code, node: &Node, pointer: &str, message: String| {
            Diagnostic::new(
                code,
                Some(&node.id),
                format!("/nodes/{}{pointer}", escape(&node.id)),
                message,
            )
        };
        // Nodes from which a successful exit is reachable (reverse search from the exits).
        let mut live = vec![false; w.nodes.len()];
        let mut stack = self.exits();
        while let Some(v) = stack.pop() {
            if !live[v] {
                live[v] = true;
                stack.extend(
                    (0..w.nodes.len()).filter(|&u| !live[u] && self.successors(u).any(|s| s == v)),
                );
            }
        }
        for (i, node) in w.nodes.iter().enumerate() {
            let reachable = self.dom.as_ref().is_some_and(|d| d.reachable(i));
            if !reachable {
                out.push(node_diag(Code::UnreachableState, node, "", format!(
                    "{}: not reachable from initial '{}'; route a transition to it or delete it", node.id, w.initial
                )));
            } else if !live[i] {
                out.push(node_diag(Code::DeadState, node, "", format!(
                    "{}: no path from here reaches a successful end ($end or a node without transitions); add a route to $end or to a sink node",
                    node.id
                )));
            }
            if let Some(events) = emitted_events(node) {
                for t in &node.transitions {
                    if !events.iter().any(|e| e == &t.event) {
                        out.push(node_diag(Code::UnreachableTransition, node, &format!("/transitions/{}", escape(&t.event)), format!(
                            "{}: a {} node never emits '{}', so this transition is never taken; use one of: {}",
                            node.id, node.kind.as_str(), t.event, events.join(", ")
                        )));
                    }
                }
            }
            if node.kind == NodeType::Script && !node.is_sink() && node.target("failure").is_none()
            {
                out.push(node_diag(Code::MissingFailureRoute, node, "/transitions", format!(
                    "{}: no `failure` transition, so a failing command fails the run; add `failure: <node>` to handle it", node.id
                )));
            }
            if node.kind.is_fanout() {
                out.push(node_diag(Code::FanoutRequiresHostOrApi, node, "/type", format!(
                    "{}: {} is a fan-out node: it needs a host that can run subagents (or an API key), and mocks in test_workflow",
                    node.id, node.kind.as_str()
                )));
            }
            if let (Some(known), NodeType::Subworkflow) = (&options.workflows, node.kind)
                && let Some(child) = node.config_str("workflow")
                && !known.iter().any(|k| k == child)
            {
                out.push(node_diag(Code::UnknownSubworkflow, node, "/config/workflow", format!(
                    "{}: subworkflow '{child}' does not exist in this scope; create it or fix the id", node.id
                )));
            }
            if let (Some(calls), NodeType::Subworkflow) = (&options.calls, node.kind)
                && let Some(child) = node.config_str("workflow")
                && let Some(path) = call_path(calls, child, &w.id)
            {
                out.push(node_diag(Code::SubworkflowCycle, node, "/config/workflow", format!(
                    "{}: calling '{child}' comes back to this workflow ({} -> {}), so a run would nest until the \
                     depth limit fails it; remove one of the calls or turn the repetition into a loop with \
                     maxIterations", node.id, w.id, path.join(" -> ")
                )));
            }
        }
        if let Some(models) = &options.models {
            for (pointer, model) in model_uses(w) {
                if !models.iter().any(|m| m == model) {
                    let node = crate::definition::schema::node_of(&pointer);
                    let who = node
                        .as_deref()
                        .map(|n| format!("{n}: "))
                        .unwrap_or_default();
                    out.push(Diagnostic::new(Code::UnknownModel, node.as_deref(), pointer, format!(
                        "{who}model '{model}' is not in roscoe.yaml's available models; use one of: {}", models.join(", ")
                    )));
                }
            }
        }
        if let Some(inputs) = &w.inputs {
            let used: HashSet<&str> = self
                .sites
                .iter()
                .filter(|s| s.reference.root == "input")
                .filter_map(|s| match s.reference.path.first() {
                    Some(Segment::Field(f)) => Some(f.as_str()),
                    _ => None,
                })
                .collect();
            for input in inputs.iter().filter(|i| !used.contains(i.name.as_str())) {
                out.push(Diagnostic::new(Code::UnusedInput, None, format!("/inputs/{}", escape(&input.name)), format!(
                    "input '{}' is declared but never referenced; use {{{{ input.{} }}}} somewhere or remove it", input.name, input.name
                )));
            }
        }
        out
    }
}

/// The events a node can emit, or `None` when any transition key may be taken (human).
fn emitted_events(node: &Node) -> Option<Vec<String>> {
    let c = &node.config;
    let mut events: Vec<String> = match node.kind {
        NodeType::Human => return None,
        NodeType::Condition if c.contains_key("cases") => {
            let mut e: Vec<String> = c["cases"]
                .as_array()
                .map(|cases| {
                    cases
                        .iter()
                        .filter_map(|x| x["event"].as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            e.extend(c.get("default").and_then(Value::as_str).map(str::to_owned));
            e
        }
        NodeType::Condition => vec!["true".into(), "false".into()],
        NodeType::AiJudge => node.choices()
            .into_iter()
            .chain(["failure".to_owned()])
            .collect(),
        NodeType::Consensus => match c.get("mode").and_then(Value::as_str).unwrap_or("gate") {
            "gate" => node.choices()
                .into_iter()
                .chain(["no_consensus".into(), "failure".into()])
                .collect(),
            "answer" => vec!["consensus".into(), "no_consensus".into(), "failure".into()],
            _ => vec!["success".into(), "failure".into()],
        },
        _ => vec!["success".into(), "failure".into()],
    };
    if node.max_iterations.is_some() {
        events.push("max_iterations".into());
    }
    Some(events)
}

/// Every `model` value in the workflow, with its pointer.
fn model_uses(w: &Workflow) -> Vec<(String, &str)> {
    let mut out = Vec::new();
    if let Some(m) = w.defaults.get("model").and_then(Value::as_str) {
        out.push(("/defaults/model".to_owned(), m));
    }
    for node in &w.nodes {
        for (k, v) in &node.config {
            models_in(
                k,
                v,
                &format!("/nodes/{}/config", escape(&node.id)),
                &mut out,
            );
        }
    }
    out
}

/// `model` strings at any depth of a config entry (`model`, `agents/0/model`, `reduce/model`, …).
fn models_in<'v>(key: &str, v: &'v Value, parent: &str, out: &mut Vec<(String, &'v str)>) {
    let pointer = format!("{parent}/{}", escape(key));
    match v {
        Value::String(m) if key == "model" => out.push((pointer, m)),
        Value::Object(map) => map.iter().for_each(|(k, x)| models_in(k, x, &pointer, out)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| models_in(&i.to_string(), x, &pointer, out)),
        _ => {}
    }
}

/// The chain of calls from `start` back to `home` (`start`, …, `home`), when the call graph has one.
fn call_path(calls: &BTreeMap<String, Vec<String>>, start: &str, home: &str) -> Option<Vec<String>> {
    let mut came_from: HashMap<&str, &str> = HashMap::new();
    let mut queue = VecDeque::from([start]);
    came_from.insert(start, start);
    while let Some(id) = queue.pop_front() {
        if id == home {
            let mut path = vec![id.to_owned()];
            let mut at = id;
            while at != start {
                at = came_from[at];
                path.push(at.to_owned());
            }
            path.reverse();
            return Some(path);
        }
        for next in calls.get(id).into_iter().flatten() {
            if !came_from.contains_key(next.as_str()) {
                came_from.insert(next, id);
                queue.push_back(next);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::definition::diagnostic::Code;
    use crate::definition::validate::tests::{WORKED_EXAMPLE, check, lint_fixtures, lint_options, wf};
    use crate::definition::validate::{Options, validate};
    use crate::definition::Severity;

    #[test]
    fn worked_example_lint_is_informational_only() {
        let found = check(
            WORKED_EXAMPLE,
            &Options {
                models: Some(vec!["m".into()]),
                ..lint_options()
            },
        );
        let codes: Vec<_> = found.iter().map(|d| d.code).collect();
        assert_eq!(codes, [Code::FanoutRequiresHostOrApi], "{found:#?}");
    }


    #[test]
    fn unquoted_boolean_transition_keys_are_refused_before_lint() {
        let text = wf("  a: { type: condition, config: { expression: 'true' }, transitions: { true: $end, 'false': $fail } }\n");
        let found = check(&text, &lint_options());
        assert_eq!(found.iter().map(|d| d.code).collect::<Vec<_>>(), [Code::InvalidConfig], "{found:#?}");
        assert!(found[0].message.contains("put it in quotes: `\"true\":`"), "{}", found[0].message);
    }


    #[test]
    fn each_lint_code_has_a_failing_fixture() {
        let options = Options {
            models: Some(vec!["sonnet".into()]),
            workflows: Some(vec!["known".into()]),
            calls: Some(BTreeMap::from([
                ("known".into(), vec!["middle".into()]),
                ("middle".into(), vec!["t".into()]),
            ])),
            ..lint_options()
        };
        let cases = lint_fixtures();
        for (code, node, text) in cases {
            let v = validate(&text, &options);
            assert!(
                v.is_valid(),
                "lint fixture must pass integrity: {:#?}",
                v.diagnostics
            );
            assert!(
                v.diagnostics
                    .iter()
                    .any(|d| d.code == code && d.node.as_deref() == node),
                "expected {code} on {node:?}, got {:#?}\n{text}",
                v.diagnostics
            );
            assert!(v.diagnostics.iter().all(|d| d.severity != Severity::Error));
        }
    }


    #[test]
    fn a_subworkflow_cycle_names_the_whole_chain() {
        let calls = BTreeMap::from([
            ("known".to_owned(), vec!["middle".to_owned()]),
            ("middle".to_owned(), vec!["known".to_owned(), "t".to_owned()]),
        ]);
        let options = Options { calls: Some(calls), ..lint_options() };
        let text = wf("  a: { type: subworkflow, config: { workflow: known } }\n");
        let found: Vec<_> = check(&text, &options).into_iter().filter(|d| d.code == Code::SubworkflowCycle).collect();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(found[0].message.contains("(t -> known -> middle -> t)"), "{}", found[0].message);
        // A call chain that never comes back is fine, even when it loops elsewhere.
        let calls = BTreeMap::from([("known".to_owned(), vec!["known".to_owned()])]);
        let options = Options { calls: Some(calls), ..lint_options() };
        assert!(check(&text, &options).iter().all(|d| d.code != Code::SubworkflowCycle));
    }
}
