//! The integrity stage of validation: every target and `initial` names a node, every reference names something in
//! scope that has surely run (the §4.5 dominance rule, outputs at every exit), loops are capped (the cycle rule), and
//! each executor's own rules of §7 hold. Every problem is an error.

use serde_json::Value;

use super::{Checker, Scope, Site, escape};
use crate::definition::diagnostic::{Code, Diagnostic};
use crate::definition::shell_holes;
use crate::definition::model::{Node, NodeType, RESERVED_EVENTS, Target};
use crate::definition::template::Segment;

impl Checker<'_> {
    pub(super) fn integrity(&self) -> Vec<Diagnostic> {
        let mut out = self.syntax.clone();
        let w = self.w;
        if !self.index.contains_key(w.initial.as_str()) {
            let ids: Vec<_> = w.nodes.iter().map(|n| n.id.as_str()).collect();
            out.push(Diagnostic::new(
                Code::UnknownInitial,
                None,
                "/initial",
                format!(
                    "initial: '{}' is not a node; set `initial` to one of: {}",
                    w.initial,
                    ids.join(", ")
                ),
            ));
        }
        for node in &w.nodes {
            for t in &node.transitions {
                if let Target::Node(target) = &t.target
                    && !self.index.contains_key(target.as_str())
                {
                    out.push(Diagnostic::new(
                        Code::UnknownTarget,
                        Some(&node.id),
                        format!("/nodes/{}/transitions/{}", escape(&node.id), escape(&t.event)),
                        format!(
                            "node '{}': transition '{}' targets '{target}', which is not a node; use an existing node id, $end or $fail",
                            node.id, t.event
                        ),
                    ));
                }
            }
        }
        for site in &self.sites {
            out.extend(self.check_reference(site));
        }
        out.extend(self.cycles());
        for node in &w.nodes {
            out.extend(executor_rules(node));
        }
        out
    }

    fn check_reference(&self, site: &Site) -> Option<Diagnostic> {
        let w = self.w;
        let owner = site.node.map(|i| w.nodes[i].id.as_str());
        let who = owner
            .map(|id| format!("node '{id}'"))
            .unwrap_or_else(|| "outputs".into());
        let shown = if site.bare {
            site.reference.to_string()
        } else {
            format!("{{{{ {} }}}}", site.reference)
        };
        let diag = |code, message: String| {
            Some(Diagnostic::new(code, owner, site.pointer.clone(), message))
        };
        let root = site.reference.root.as_str();
        match root {
            "input" => {
                let Some(inputs) = &w.inputs else { return None };
                let Some(Segment::Field(name)) = site.reference.path.first() else {
                    return None;
                };
                if inputs.iter().any(|i| &i.name == name) {
                    return None;
                }
                let declared: Vec<_> = inputs.iter().map(|i| i.name.as_str()).collect();
                diag(
                    Code::UnknownInput,
                    format!(
                        "{who}: reference '{shown}' uses input '{name}', which is not declared; declare it under `inputs:` or use one of: {}",
                        if declared.is_empty() {
                            "(none)".to_owned()
                        } else {
                            declared.join(", ")
                        }
                    ),
                )
            }
            "run" => None,
            "item" | "index" | "results" => {
                let allowed = match root {
                    "results" => site.scope == Scope::MapReduce,
                    _ => site.scope == Scope::MapBranch,
                };
                if allowed {
                    return None;
                }
                let place = if root == "results" {
                    "map.config.reduce.prompt"
                } else {
                    "map.config.prompt"
                };
                diag(
                    Code::InvalidReferenceScope,
                    format!(
                        "{who}: reference '{shown}' is only available inside {place}; move it there or reference a node instead"
                    ),
                )
            }
            _ => {
                let Some(&a) = self.index.get(root) else {
                    return diag(
                        Code::UnknownReference,
                        format!(
                            "{who}: reference '{shown}' names '{root}', which is neither a node nor input/run; reference an existing node id"
                        ),
                    );
                };
                let dom = self.dom.as_ref()?;
                if site.has_fallback {
                    return None;
                }
                let fix = if site.bare {
                    format!("has({}) && …", site.reference)
                } else {
                    format!("{{{{ {} || \"none\" }}}}", site.reference)
                };
                match site.node {
                    Some(b) if !dom.reachable(b) => None,
                    Some(b) if a == b => diag(
                        Code::UndominatedReference,
                        format!(
                            "{}: reference '{shown}' reads the node's own output, which does not exist on its first visit; add a fallback: {fix}",
                            w.nodes[b].id
                        ),
                    ),
                    Some(b) if dom.strictly_dominates(a, b) => None,
                    Some(b) => {
                        let id = &w.nodes[b].id;
                        diag(
                            Code::UndominatedReference,
                            format!(
                                "{id}: reference '{shown}' is not guaranteed to have run (not all paths to '{id}' pass through '{root}'); reference a node both branches pass through or add a fallback: {fix}"
                            ),
                        )
                    }
                    None => {
                        let missed: Vec<&str> = self
                            .exits()
                            .into_iter()
                            .filter(|&e| dom.reachable(e) && !dom.dominates(a, e))
                            .map(|e| w.nodes[e].id.as_str())
                            .collect();
                        if missed.is_empty() {
                            return None;
                        }
                        diag(
                            Code::UndominatedReference,
                            format!(
                                "outputs: reference '{shown}' is not guaranteed to have run (the run can finish at '{}' without passing through '{root}'); reference a node every exit passes through or add a fallback: {fix}",
                                missed.join("', '")
                            ),
                        )
                    }
                }
            }
        }
    }

    /// The cycle rule: without capped (`maxIterations`) and human nodes the graph must be acyclic.
    fn cycles(&self) -> Vec<Diagnostic> {
        let w = self.w;
        let n = w.nodes.len();
        let capped =
            |i: usize| w.nodes[i].max_iterations.is_some() || w.nodes[i].kind == NodeType::Human;
        // reach[v] = vertices reachable from v by at least one edge, through uncapped vertices only.
        let reach: Vec<Vec<bool>> = (0..n)
            .map(|v| {
                let mut seen = vec![false; n];
                if capped(v) {
                    return seen;
                }
                let mut stack: Vec<usize> = self.successors(v).filter(|&s| !capped(s)).collect();
                while let Some(u) = stack.pop() {
                    if !seen[u] {
                        seen[u] = true;
                        stack.extend(self.successors(u).filter(|&s| !capped(s) && !seen[s]));
                    }
                }
                seen
            })
            .collect();
        let mut reported = vec![false; n];
        let mut out = Vec::new();
        for v in 0..n {
            if reported[v] || !reach[v][v] {
                continue;
            }
            for u in 0..n {
                if reach[v][u] && reach[u][v] {
                    reported[u] = true;
                }
            }
            let path = self.cycle_path(v, &capped);
            let names: Vec<&str> = path.iter().map(|&i| w.nodes[i].id.as_str()).collect();
            let id = &w.nodes[v].id;
            out.push(Diagnostic::new(
                Code::UncappedCycle,
                Some(id),
                format!("/nodes/{}", escape(id)),
                format!(
                    "{id}: uncapped_cycle: {} (add maxIterations to one of these nodes, or put a human node in the loop)",
                    names.join(" -> ")
                ),
            ));
        }
        out
    }

    /// Shortest cycle v -> … -> v through uncapped nodes (breadth-first).
    fn cycle_path(&self, v: usize, capped: &dyn Fn(usize) -> bool) -> Vec<usize> {
        let n = self.w.nodes.len();
        let mut parent = vec![usize::MAX; n];
        let mut queue = std::collections::VecDeque::from([v]);
        while let Some(u) = queue.pop_front() {
            for s in self.successors(u) {
                if capped(s) {
                    continue;
                }
                if s == v {
                    let mut path = vec![v];
                    let mut x = u;
                    while x != v {
                        path.push(x);
                        x = parent[x];
                    }
                    path.push(v);
                    path.reverse();
                    return path;
                }
                if parent[s] == usize::MAX && s != v {
                    parent[s] = u;
                    queue.push_back(s);
                }
            }
        }
        vec![v, v]
    }
}

/// Executor-specific integrity rules (§5, §7).
fn executor_rules(node: &Node) -> Vec<Diagnostic> {
    let id = node.id.as_str();
    let c = &node.config;
    let has = |k: &str| c.contains_key(k);
    let mut out = Vec::new();
    let mut push = |code, pointer: &str, message: String| {
        out.push(Diagnostic::new(
            code,
            Some(id),
            format!("/nodes/{}{pointer}", escape(id)),
            message,
        ));
    };
    match node.kind {
        NodeType::Script if has("command") == has("script") => push(
            Code::ScriptSource,
            "/config",
            format!("{id}: a script node needs exactly one of `command` or `script`; keep one"),
        ),
        NodeType::Script => {
            if let Some(problem) = node.config_str("command").and_then(shell_holes::unsafe_hole) {
                push(Code::ScriptHoleQuoted, "/config/command", format!("{id}: {problem}"));
            }
        }
        NodeType::Condition
            if has("expression") == has("cases") || (has("cases") && !has("default")) =>
        {
            push(
                Code::ConditionForm,
                "/config",
                format!(
                    "{id}: a condition node needs either `expression`, or `cases` together with `default`"
                ),
            )
        }
        NodeType::AiJudge => choice_rules(node, &mut push),
        NodeType::Consensus => {
            let n = c
                .get("agents")
                .and_then(Value::as_array)
                .map(Vec::len)
                .or_else(|| {
                    c.get("agentCount")
                        .and_then(Value::as_u64)
                        .map(|n| n as usize)
                })
                .unwrap_or(3);
            if let Some(q) = c
                .get("quorum")
                .and_then(Value::as_u64)
                .filter(|&q| q as usize > n)
            {
                push(
                    Code::QuorumExceedsAgents,
                    "/config/quorum",
                    format!(
                        "{id}: quorum {q} is more than the {n} agents; lower quorum or add agents"
                    ),
                );
            }
            if c.get("mode").and_then(Value::as_str).unwrap_or("gate") == "gate" {
                choice_rules(node, &mut push);
            }
        }
        NodeType::RoundRobin => match c.get("candidates") {
            Some(Value::Array(list)) if !(2..=8).contains(&list.len()) => push(
                Code::CandidateCount,
                "/config/candidates",
                format!(
                    "{id}: round_robin needs 2 to 8 literal candidates, found {}; adjust the list",
                    list.len()
                ),
            ),
            None if !has("candidatesPrompt") => push(
                Code::CandidateCount,
                "/config",
                format!(
                    "{id}: round_robin needs `candidates` (a list or a template) or `candidatesPrompt`; add one"
                ),
            ),
            _ => {}
        },
        NodeType::Map if !has("items") && !has("extract") => push(
            Code::MapWithoutItems,
            "/config",
            format!("{id}: a map node needs `items` (a list or a template) or `extract`; add one"),
        ),
        NodeType::Human if node.transitions.iter().all(|t| t.event == "timeout") => push(
            Code::HumanWithoutTransitions,
            "/transitions",
            format!(
                "{id}: a human node needs at least one transition for the human to choose; add e.g. `approve: <node>`"
            ),
        ),
        _ => {}
    }
    out
}

/// Judge / consensus-gate choices: none reserved, each routed, at least one.
fn choice_rules(node: &Node, push: &mut dyn FnMut(Code, &str, String)) {
    let id = node.id.as_str();
    match node.config.get("choices").and_then(Value::as_array) {
        Some(choices) => {
            for (i, choice) in choices.iter().filter_map(Value::as_str).enumerate() {
                if RESERVED_EVENTS.contains(&choice) {
                    push(
                        Code::ReservedEvent,
                        &format!("/config/choices/{i}"),
                        format!(
                            "{id}: choice '{choice}' is a reserved event ({}); rename the choice",
                            RESERVED_EVENTS.join(", ")
                        ),
                    );
                } else if node.target(choice).is_none() {
                    push(
                        Code::MissingTransition,
                        &format!("/config/choices/{i}"),
                        format!(
                            "{id}: choice '{choice}' has no transition; add `{choice}: <node>` under transitions"
                        ),
                    );
                }
            }
        }
        None if node
            .transitions
            .iter()
            .all(|t| RESERVED_EVENTS.contains(&t.event.as_str())) =>
        {
            push(
                Code::MissingTransition,
                "/transitions",
                format!(
                    "{id}: {} has no verdicts: add a transition per verdict (e.g. `approve: <node>`) or list `choices`",
                    node.kind.as_str()
                ),
            )
        }
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::definition::diagnostic::{Code, Severity};
    use crate::definition::validate::Options;
    use crate::definition::validate::tests::{WORKED_EXAMPLE, check, failing_fixtures, wf};

    #[test]
    fn worked_example_without_branch_input_reports_unknown_input() {
        let text = WORKED_EXAMPLE.replace("  branch: { type: string, required: true }\n", "");
        let found = check(&text, &Options::default());
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].code, Code::UnknownInput);
        assert_eq!(found[0].node.as_deref(), Some("merge"));
        assert_eq!(
            (found[0].pointer.as_str(), found[0].line),
            ("/nodes/merge/config/command", Some(44))
        ); // one line above the file: `branch` was removed
    }


    #[test]
    fn diamond_dominance_conformance_item_9() {
        let diamond = |reference: &str| {
            wf(&format!(
                "  a: {{ type: ai_judge, config: {{ prompt: p }}, transitions: {{ left: b, right: c }} }}\n  \
                 b: {{ type: ai_agent, config: {{ prompt: p }}, transitions: {{ success: d }} }}\n  \
                 c: {{ type: ai_agent, config: {{ prompt: p }}, transitions: {{ success: d }} }}\n  \
                 d: {{ type: ai_agent, config: {{ prompt: '{reference}' }} }}\n"
            ))
        };
        let found = check(&diamond("{{ b.x }}"), &Options::default());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, Code::UndominatedReference);
        assert_eq!(
            found[0].message,
            "d: reference '{{ b.x }}' is not guaranteed to have run (not all paths to 'd' pass through 'b'); \
             reference a node both branches pass through or add a fallback: {{ b.x || \"none\" }}"
        );
        assert_eq!(
            (found[0].line, found[0].node.as_deref()),
            (Some(7), Some("d"))
        );
        assert!(check(&diamond("{{ a.x }}"), &Options::default()).is_empty());
        assert!(check(&diamond("{{ b.x || \"n/a\" }}"), &Options::default()).is_empty());
    }


    #[test]
    fn cycle_rule_conformance_item_8() {
        let cycle = |extra: &str, kind: &str| {
            wf(&format!(
                "  a: {{ type: script, config: {{ command: ls }}, transitions: {{ success: $end, failure: b }} }}\n  \
                 b: {{ type: {kind}, config: {{ prompt: p }}, transitions: {{ success: a }}{extra} }}\n"
            ))
        };
        let found = check(&cycle("", "ai_agent"), &Options::default());
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].code, Code::UncappedCycle);
        assert!(
            found[0].message.contains("a -> b -> a"),
            "{}",
            found[0].message
        );
        assert!(
            check(
                &cycle(", maxIterations: 2", "ai_agent"),
                &Options::default()
            )
            .is_empty()
        );
        assert!(check(&cycle("", "human"), &Options::default()).is_empty());
    }


    #[test]
    fn each_schema_and_integrity_code_has_a_failing_fixture() {
        for (code, node, text) in failing_fixtures() {
            let found = check(&text, &Options::default());
            assert!(
                found
                    .iter()
                    .any(|d| d.code == code && d.node.as_deref() == node),
                "expected {code} on {node:?}, got {found:#?}\n{text}"
            );
            for d in &found {
                assert_eq!(d.severity, Severity::Error);
                if let Some(n) = &d.node {
                    assert!(
                        d.message.contains(n.as_str()),
                        "message must name the node: {}",
                        d.message
                    );
                }
                assert!(d.line.is_some(), "no line for {d:?}");
            }
        }
    }


    #[test]
    fn conditions_reference_like_templates() {
        let text = wf(
            "  a: { type: ai_judge, config: { prompt: p }, transitions: { x: b, y: c } }\n  \
             b: { type: ai_agent, config: { prompt: p }, transitions: { success: c } }\n  \
             c: { type: condition, config: { expression: 'b.text == \"ok\" && a.verdict == \"x\"' }, transitions: { 'true': $end, 'false': $end } }\n",
        );
        let found = check(&text, &Options::default());
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].code, Code::UndominatedReference);
        assert!(found[0].message.contains("'b.text'") && found[0].message.contains("has(b.text)"));
        assert!(
            check(
                &text.replace("b.text == \"ok\"", "has(b.text)"),
                &Options::default()
            )
            .is_empty()
        );
    }


    #[test]
    fn outputs_must_be_dominated_at_every_exit() {
        let text = |output: &str| {
            format!(
                "name: t\ninitial: a\noutputs: {{ r: '{output}' }}\nnodes:\n  \
                 a: {{ type: ai_judge, config: {{ prompt: p }}, transitions: {{ x: b, y: $end }} }}\n  \
                 b: {{ type: ai_agent, config: {{ prompt: p }} }}\n"
            )
        };
        assert!(check(&text("{{ a.verdict }}"), &Options::default()).is_empty());
        let found = check(&text("{{ b.text }}"), &Options::default());
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(
            (found[0].code, found[0].pointer.as_str()),
            (Code::UndominatedReference, "/outputs/r")
        );
        assert!(check(&text("{{ b.text || a.verdict }}"), &Options::default()).is_empty());
    }


    #[test]
    fn map_scopes() {
        let text = wf(
            "  a: { type: map, config: { items: [1], prompt: '{{ item }} {{ index }}', reduce: { prompt: '{{ results }}' } } }\n",
        );
        assert!(check(&text, &Options::default()).is_empty());
        let text = wf("  a: { type: map, config: { items: [1], prompt: '{{ results }}' } }\n");
        assert_eq!(
            check(&text, &Options::default())[0].code,
            Code::InvalidReferenceScope
        );
    }
}
