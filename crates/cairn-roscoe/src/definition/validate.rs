//! Validation in the spec's order (§5): schema → integrity → lint, stopping after the first stage that fails.
//!
//! Every stage collects all of its problems. Integrity checks targets, references (the §4.5 dominance rule),
//! the cycle rule and the executor rules of §7; lint adds non-fatal warnings. Lint needs facts from outside the
//! file (available models, workflow ids in scope), which the caller passes in [`Options`]; a fact left out skips
//! its check.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use serde_json::Value;

use super::diagnostic::{Code, Diagnostic, Severity};
use super::dominance::Dominators;
use super::expression;
use super::model::{Node, NodeType, RESERVED_EVENTS, Target, Workflow};
use super::parse as parser;
use super::template::{Reference, Segment, Template};

/// What to validate against.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The id the workflow is stored under; `name` must equal it. Without it, `name` is the id.
    pub id: Option<String>,
    /// Run the lint stage after a clean schema + integrity pass.
    pub lint: bool,
    /// Model ids permitted by roscoe.yaml (aliases already expanded); `None` skips `unknown_model`.
    pub models: Option<Vec<String>>,
    /// Workflow ids that resolve in the caller's scope; `None` skips `unknown_subworkflow`.
    pub workflows: Option<Vec<String>>,
    /// The subworkflows each workflow in scope calls (id → called ids, as stored); `None` skips
    /// `subworkflow_cycle`. This workflow's own entry, if any, is ignored: its nodes are what is checked.
    pub calls: Option<BTreeMap<String, Vec<String>>>,
}

/// The outcome of [`validate`].
#[derive(Clone, Debug)]
pub struct Validation {
    /// The workflow, when the schema stage passed (even if integrity failed).
    pub workflow: Option<Workflow>,
    /// Every problem of the stages that ran, with line and column where known.
    pub diagnostics: Vec<Diagnostic>,
}

impl Validation {
    /// `true` when no diagnostic is an error (lint warnings do not count).
    pub fn is_valid(&self) -> bool {
        self.diagnostics
            .iter()
            .all(|d| d.severity != Severity::Error)
    }
}

/// Schema + integrity: the workflow, or every error of the first failing stage.
pub fn parse(text: &str, id: Option<&str>) -> Result<Workflow, Vec<Diagnostic>> {
    let v = validate(
        text,
        &Options {
            id: id.map(str::to_owned),
            ..Options::default()
        },
    );
    match v.workflow {
        Some(w) if v.is_valid() => Ok(w),
        _ => Err(v.diagnostics),
    }
}

/// Runs schema → integrity → (lint, if asked), stopping after the first stage with errors.
pub fn validate(text: &str, options: &Options) -> Validation {
    let (workflow, doc) = match parser::parse(text, options.id.as_deref()) {
        Ok(parsed) => parsed,
        Err(diagnostics) => {
            return Validation {
                workflow: None,
                diagnostics,
            };
        }
    };
    let checker = Checker::new(&workflow);
    let mut diagnostics = checker.integrity();
    if diagnostics.is_empty() && options.lint {
        diagnostics = checker.lint(options);
    }
    let diagnostics = diagnostics
        .into_iter()
        .map(|d| parser::locate(d, &doc))
        .collect();
    Validation {
        workflow: Some(workflow),
        diagnostics,
    }
}

/// Where a template or expression sits, which decides the roots it may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    Plain,
    /// `map.config.prompt`: `item` and `index` allowed.
    MapBranch,
    /// `map.config.reduce.prompt`: `results` allowed.
    MapReduce,
}

/// One reference, where it occurs.
struct Site {
    /// Node index, `None` for top-level `outputs`.
    node: Option<usize>,
    pointer: String,
    reference: Reference,
    has_fallback: bool,
    scope: Scope,
    /// Written without braces (a CEL condition).
    bare: bool,
}

struct Checker<'w> {
    w: &'w Workflow,
    index: HashMap<&'w str, usize>,
    dom: Option<Dominators>,
    sites: Vec<Site>,
    syntax: Vec<Diagnostic>,
}

impl<'w> Checker<'w> {
    fn new(w: &'w Workflow) -> Self {
        let index: HashMap<&str, usize> = w
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.as_str(), i))
            .collect();
        let succ = w
            .nodes
            .iter()
            .map(|n| {
                n.transitions
                    .iter()
                    .filter_map(|t| match &t.target {
                        Target::Node(id) => index.get(id.as_str()).copied(),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let dom = index
            .get(w.initial.as_str())
            .map(|&start| Dominators::new(succ, start));
        let mut checker = Checker {
            w,
            index,
            dom,
            sites: Vec::new(),
            syntax: Vec::new(),
        };
        checker.collect_sites();
        checker
    }

    fn collect_sites(&mut self) {
        let w = self.w;
        for (i, node) in w.nodes.iter().enumerate() {
            for (pointer, text, scope, bare) in text_fields(node) {
                let pointer = format!("/nodes/{}/config{pointer}", escape(&node.id));
                self.add(Some(i), &node.id, pointer, text, scope, bare);
            }
        }
        for (name, value) in &w.outputs {
            let mut strings = Vec::new();
            strings_in(value, &format!("/outputs/{}", escape(name)), &mut strings);
            for (pointer, text) in strings {
                self.add(None, "outputs", pointer, text, Scope::Plain, false);
            }
        }
    }

    fn add(
        &mut self,
        node: Option<usize>,
        owner: &str,
        pointer: String,
        text: &str,
        scope: Scope,
        bare: bool,
    ) {
        let who = node
            .map(|_| format!("node '{owner}'"))
            .unwrap_or_else(|| "outputs".to_owned());
        if bare {
            match expression::references(text) {
                Ok(refs) => self.sites.extend(refs.into_iter().map(|r| Site {
                    node,
                    pointer: pointer.clone(),
                    reference: r.reference,
                    has_fallback: r.has_fallback,
                    scope,
                    bare,
                })),
                Err(e) => self.syntax.push(Diagnostic::new(
                    Code::InvalidExpression,
                    node.map(|_| owner),
                    pointer,
                    format!("{who}: condition `{text}` is not valid CEL ({e}); fix the expression, e.g. review.verdict == \"approve\""),
                )),
            }
        } else {
            match Template::parse(text) {
                Ok(t) => self.sites.extend(t.uses().into_iter().map(|u| Site {
                    node,
                    pointer: pointer.clone(),
                    reference: u.reference.clone(),
                    has_fallback: u.has_fallback,
                    scope,
                    bare,
                })),
                Err(e) => self.syntax.push(Diagnostic::new(
                    Code::InvalidTemplate,
                    node.map(|_| owner),
                    pointer,
                    format!("{who}: template does not parse: {e}; write holes as {{{{ node.field }}}} or {{{{ node.field || \"default\" }}}}, and a literal '{{{{' as \\{{{{"),
                )),
            }
        }
    }

    // ---- integrity -------------------------------------------------------------------------------------------

    fn integrity(&self) -> Vec<Diagnostic> {
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

    /// Nodes where a run can complete: sinks and nodes with a `$end` transition.
    fn exits(&self) -> Vec<usize> {
        (0..self.w.nodes.len())
            .filter(|&i| {
                let n = &self.w.nodes[i];
                n.is_sink() || n.transitions.iter().any(|t| t.target == Target::End)
            })
            .collect()
    }

    fn successors(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        self.w.nodes[v]
            .transitions
            .iter()
            .filter_map(|t| match &t.target {
                Target::Node(id) => self.index.get(id.as_str()).copied(),
                _ => None,
            })
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

    // ---- lint ------------------------------------------------------------------------------------------------

    fn lint(&self, options: &Options) -> Vec<Diagnostic> {
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
                        // YAML 1.1 reads an unquoted `true:` key as a boolean, which arrives here as "True".
                        let quoting = match t.event.as_str() {
                            "True" | "False" => format!(
                                " (an unquoted `{0}:` key is read as a boolean: write '{0}' in quotes)",
                                t.event.to_ascii_lowercase()
                            ),
                            _ => String::new(),
                        };
                        out.push(node_diag(Code::UnreachableTransition, node, &format!("/transitions/{}", escape(&t.event)), format!(
                            "{}: a {} node never emits '{}', so this transition is never taken; use one of: {}{quoting}",
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

/// The events a node can emit, or `None` when any transition key may be taken (human).
fn emitted_events(node: &Node) -> Option<Vec<String>> {
    let c = &node.config;
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let derived_choices = || -> Vec<String> {
        match c.get("choices") {
            Some(_) => strings(c.get("choices")),
            None => node
                .transitions
                .iter()
                .map(|t| t.event.clone())
                .filter(|e| !RESERVED_EVENTS.contains(&e.as_str()))
                .collect(),
        }
    };
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
        NodeType::AiJudge => derived_choices()
            .into_iter()
            .chain(["failure".to_owned()])
            .collect(),
        NodeType::Consensus => match c.get("mode").and_then(Value::as_str).unwrap_or("gate") {
            "gate" => derived_choices()
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

/// Every templated (or CEL) string in a node's config: (pointer under `config`, text, scope, is CEL).
fn text_fields(node: &Node) -> Vec<(String, &str, Scope, bool)> {
    let c = &node.config;
    let mut out = Vec::new();
    fn push<'n>(
        out: &mut Vec<(String, &'n str, Scope, bool)>,
        pointer: String,
        v: Option<&'n Value>,
        scope: Scope,
        bare: bool,
    ) {
        if let Some(text) = v.and_then(Value::as_str) {
            out.push((pointer, text, scope, bare));
        }
    }
    let each = |key: &str| {
        c.get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().enumerate().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let entries = |key: &str| {
        c.get(key)
            .and_then(Value::as_object)
            .map(|m| m.iter().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    match node.kind {
        NodeType::Script => {
            push(
                &mut out,
                "/command".into(),
                c.get("command"),
                Scope::Plain,
                false,
            );
            push(&mut out, "/cwd".into(), c.get("cwd"), Scope::Plain, false);
            for (i, v) in each("args") {
                push(&mut out, format!("/args/{i}"), Some(v), Scope::Plain, false);
            }
            for (k, v) in entries("env") {
                push(
                    &mut out,
                    format!("/env/{}", escape(k)),
                    Some(v),
                    Scope::Plain,
                    false,
                );
            }
        }
        NodeType::Condition => {
            push(
                &mut out,
                "/expression".into(),
                c.get("expression"),
                Scope::Plain,
                true,
            );
            for (i, v) in each("cases") {
                push(
                    &mut out,
                    format!("/cases/{i}/when"),
                    v.get("when"),
                    Scope::Plain,
                    true,
                );
            }
        }
        NodeType::AiAgent => {
            push(
                &mut out,
                "/prompt".into(),
                c.get("prompt"),
                Scope::Plain,
                false,
            );
            push(
                &mut out,
                "/system".into(),
                c.get("system"),
                Scope::Plain,
                false,
            );
        }
        NodeType::AiJudge | NodeType::Human => push(
            &mut out,
            "/prompt".into(),
            c.get("prompt"),
            Scope::Plain,
            false,
        ),
        NodeType::Consensus => {
            push(
                &mut out,
                "/prompt".into(),
                c.get("prompt"),
                Scope::Plain,
                false,
            );
            for (i, v) in each("agents") {
                push(
                    &mut out,
                    format!("/agents/{i}/prompt"),
                    v.get("prompt"),
                    Scope::Plain,
                    false,
                );
                push(
                    &mut out,
                    format!("/agents/{i}/persona"),
                    v.get("persona"),
                    Scope::Plain,
                    false,
                );
            }
            push(
                &mut out,
                "/aggregate/prompt".into(),
                c.get("aggregate").and_then(|a| a.get("prompt")),
                Scope::Plain,
                false,
            );
        }
        NodeType::RoundRobin => {
            push(
                &mut out,
                "/candidates".into(),
                c.get("candidates"),
                Scope::Plain,
                false,
            );
            for (i, v) in each("candidates") {
                push(
                    &mut out,
                    format!("/candidates/{i}"),
                    Some(v),
                    Scope::Plain,
                    false,
                );
            }
            push(
                &mut out,
                "/candidatesPrompt".into(),
                c.get("candidatesPrompt"),
                Scope::Plain,
                false,
            );
            push(
                &mut out,
                "/criterion".into(),
                c.get("criterion"),
                Scope::Plain,
                false,
            );
        }
        NodeType::Map => {
            push(
                &mut out,
                "/items".into(),
                c.get("items"),
                Scope::Plain,
                false,
            );
            push(
                &mut out,
                "/extract/prompt".into(),
                c.get("extract").and_then(|e| e.get("prompt")),
                Scope::Plain,
                false,
            );
            push(
                &mut out,
                "/prompt".into(),
                c.get("prompt"),
                Scope::MapBranch,
                false,
            );
            push(
                &mut out,
                "/reduce/prompt".into(),
                c.get("reduce").and_then(|r| r.get("prompt")),
                Scope::MapReduce,
                false,
            );
        }
        NodeType::Subworkflow => {
            for (k, v) in entries("inputs") {
                push(
                    &mut out,
                    format!("/inputs/{}", escape(k)),
                    Some(v),
                    Scope::Plain,
                    false,
                );
            }
        }
    }
    out
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

fn strings_in<'v>(v: &'v Value, pointer: &str, out: &mut Vec<(String, &'v str)>) {
    match v {
        Value::String(s) => out.push((pointer.to_owned(), s)),
        Value::Object(m) => m
            .iter()
            .for_each(|(k, x)| strings_in(x, &format!("{pointer}/{}", escape(k)), out)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| strings_in(x, &format!("{pointer}/{i}"), out)),
        _ => {}
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
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
    use super::*;

    const WORKED_EXAMPLE: &str = include_str!("fix-failing-tests.yaml");

    fn check(text: &str, options: &Options) -> Vec<Diagnostic> {
        validate(text, options).diagnostics
    }

    fn lint_options() -> Options {
        Options {
            lint: true,
            ..Options::default()
        }
    }

    /// A one-node-per-line workflow named `t` starting at `a`.
    fn wf(nodes: &str) -> String {
        format!("name: t\ninitial: a\nnodes:\n{nodes}")
    }

    #[test]
    fn worked_example_validates_clean() {
        let v = validate(
            WORKED_EXAMPLE,
            &Options {
                id: Some("fix-failing-tests".into()),
                ..Options::default()
            },
        );
        assert!(v.diagnostics.is_empty(), "{:#?}", v.diagnostics);
        let w = v.workflow.unwrap();
        let ids: Vec<_> = w.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(
            ids,
            ["run_tests", "diagnose", "review", "ask_human", "merge"]
        );
        assert!(parse(WORKED_EXAMPLE, None).is_ok());
    }

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

    /// One broken workflow per code: (expected code, expected node, YAML).
    fn failing_fixtures() -> Vec<(Code, Option<&'static str>, String)> {
        let agent = "{ type: ai_agent, config: { prompt: p } }";
        vec![
            (Code::InvalidConfig, None, "name: t\ninitial: a\nnodes: [".into()),
            (Code::InvalidConfig, Some("a"), wf("  a: { type: ai_agent, config: { promt: p } }\n")),
            (Code::InvalidId, None, format!("name: Bad.Id\ninitial: a\nnodes:\n  a: {agent}\n")),
            (Code::ReservedNodeId, Some("run"), format!("name: t\ninitial: run\nnodes:\n  run: {agent}\n")),
            (Code::UnknownInitial, None, format!("name: t\ninitial: zz\nnodes:\n  a: {agent}\n")),
            (Code::UnknownTarget, Some("a"), wf("  a: { type: ai_agent, config: { prompt: p }, transitions: { success: nowhere } }\n")),
            (Code::UnknownReference, Some("a"), wf("  a: { type: ai_agent, config: { prompt: '{{ ghost.x }}' } }\n")),
            (Code::UndominatedReference, Some("a"), wf("  a: { type: ai_agent, config: { prompt: '{{ a.text }}' } }\n")),
            (Code::UnknownInput, Some("a"), "name: t\ninitial: a\ninputs: { x: { type: string } }\nnodes:\n  a: { type: ai_agent, config: { prompt: '{{ input.y }}' } }\n".to_owned()),
            (Code::InvalidReferenceScope, Some("a"), wf("  a: { type: ai_agent, config: { prompt: '{{ item }}' } }\n")),
            (Code::UncappedCycle, Some("a"), wf("  a: { type: ai_agent, config: { prompt: p }, transitions: { success: a } }\n")),
            (Code::ReservedEvent, Some("a"), wf("  a: { type: ai_judge, config: { prompt: p, choices: [ok, timeout] }, transitions: { ok: $end } }\n")),
            (Code::InvalidTemplate, Some("a"), wf("  a: { type: ai_agent, config: { prompt: 'x {{ a.' } }\n")),
            (Code::InvalidExpression, Some("a"), wf("  a: { type: condition, config: { expression: 'a ==' }, transitions: { 'true': $end, 'false': $fail } }\n")),
            (Code::MissingTransition, Some("a"), wf("  a: { type: ai_judge, config: { prompt: p, choices: [approve, reject] }, transitions: { approve: $end } }\n")),
            (Code::MissingTransition, Some("a"), wf("  a: { type: ai_judge, config: { prompt: p }, transitions: { failure: $fail } }\n")),
            (Code::HumanWithoutTransitions, Some("a"), wf("  a: { type: human, config: { prompt: p } }\n")),
            (Code::QuorumExceedsAgents, Some("a"), wf("  a: { type: consensus, config: { prompt: p, agentCount: 3, quorum: 4 }, transitions: { approve: $end } }\n")),
            (Code::CandidateCount, Some("a"), wf("  a: { type: round_robin, config: { criterion: c, candidates: [only] } }\n")),
            (Code::MapWithoutItems, Some("a"), wf("  a: { type: map, config: { prompt: '{{ item }}' } }\n")),
            (Code::ScriptSource, Some("a"), wf("  a: { type: script, config: { command: ls, script: run.sh } }\n")),
            (Code::ConditionForm, Some("a"), wf("  a: { type: condition, config: { cases: [{ when: 'true', event: go }] }, transitions: { go: $end } }\n")),
        ]
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

    /// One workflow per lint code that passes integrity but draws that warning: (code, node, YAML).
    fn lint_fixtures() -> Vec<(Code, Option<&'static str>, String)> {
        vec![
            (Code::UnreachableState, Some("b"), wf("  a: { type: ai_agent, config: { prompt: p } }\n  b: { type: ai_agent, config: { prompt: p } }\n")),
            (Code::DeadState, Some("b"), wf("  a: { type: ai_agent, config: { prompt: p }, transitions: { success: $end, failure: b } }\n  b: { type: human, config: { prompt: p }, transitions: { again: b } }\n")),
            (Code::UnreachableTransition, Some("a"), wf("  a: { type: condition, config: { expression: 'true' }, transitions: { 'true': $end, 'false': $end, maybe: $fail } }\n")),
            (Code::UnknownModel, Some("a"), wf("  a: { type: ai_agent, config: { prompt: p, model: gpt-9 } }\n")),
            (Code::UnknownModel, None, "name: t\ninitial: a\ndefaults: { model: gpt-9 }\nnodes:\n  a: { type: ai_agent, config: { prompt: p } }\n".to_owned()),
            (Code::UnknownSubworkflow, Some("a"), wf("  a: { type: subworkflow, config: { workflow: missing } }\n")),
            (Code::SubworkflowCycle, Some("a"), wf("  a: { type: subworkflow, config: { workflow: known } }\n")),
            (Code::UnusedInput, None, "name: t\ninitial: a\ninputs: { x: { type: string } }\nnodes:\n  a: { type: ai_agent, config: { prompt: p } }\n".to_owned()),
            (Code::MissingFailureRoute, Some("a"), wf("  a: { type: script, config: { command: ls }, transitions: { success: $end } }\n")),
            (Code::FanoutRequiresHostOrApi, Some("a"), wf("  a: { type: map, config: { items: [1, 2], prompt: '{{ item }}' } }\n")),
        ]
    }

    #[test]
    fn unquoted_boolean_transition_keys_are_explained() {
        let text = wf("  a: { type: condition, config: { expression: 'true' }, transitions: { true: $end, 'false': $fail } }\n");
        let found = check(&text, &lint_options());
        let unreachable: Vec<_> = found.iter().filter(|d| d.code == Code::UnreachableTransition).collect();
        assert_eq!(unreachable.len(), 1, "{found:#?}");
        assert!(unreachable[0].message.contains("write 'true' in quotes"), "{}", unreachable[0].message);
    }

    #[test]
    fn every_code_has_a_fixture() {
        let mut covered: HashSet<Code> =
            failing_fixtures().into_iter().chain(lint_fixtures()).map(|(code, _, _)| code).collect();
        // `name_mismatch` needs a stored id: parse.rs tests it.
        covered.insert(Code::NameMismatch);
        let missing: Vec<_> = Code::ALL.iter().filter(|c| !covered.contains(c)).collect();
        assert!(missing.is_empty(), "codes without a broken-workflow fixture: {missing:?}");
        assert!(failing_fixtures().len() + lint_fixtures().len() >= 30);
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

    #[test]
    fn all_problems_of_a_stage_are_reported_at_once() {
        let text = wf(
            "  a: { type: ai_agent, config: { prompt: '{{ ghost.x }}' }, transitions: { success: nowhere, failure: b } }\n  b: { type: human, config: { prompt: p } }\n",
        );
        let codes: Vec<_> = check(&text, &lint_options())
            .into_iter()
            .map(|d| d.code)
            .collect();
        assert_eq!(
            codes,
            [
                Code::UnknownTarget,
                Code::UnknownReference,
                Code::HumanWithoutTransitions
            ]
        );
    }

    #[test]
    fn schema_errors_stop_before_integrity() {
        let text = wf(
            "  a: { type: ai_agent, config: { prompt: p }, transitions: { success: nowhere }, maxIterations: 0 }\n",
        );
        let found = check(&text, &Options::default());
        assert!(
            found
                .iter()
                .all(|d| d.code.stage() == crate::definition::Stage::Schema),
            "{found:#?}"
        );
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
