//! Validation in the spec's order (§5): schema → integrity → lint, stopping after the first stage that fails.
//!
//! Every stage collects all of its problems. Integrity checks targets, references (the §4.5 dominance rule),
//! the cycle rule and the executor rules of §7; lint adds non-fatal warnings. Lint needs facts from outside the
//! file (available models, workflow ids in scope), which the caller passes in [`Options`]; a fact left out skips
//! its check.
//!
//! This file holds the entry points and the [`Checker`] both stages run on: the node index, the dominators and every
//! template or CEL reference of the workflow with where it sits. The stages are its methods, in [`integrity`] and
//! [`lint`].

mod integrity;
mod lint;

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::diagnostic::{Diagnostic, Severity, Code};
use super::dominance::Dominators;
use super::expression;
use super::model::{Node, NodeType, Target, Workflow};
use super::parse as parser;
use super::template::{Reference, Template};

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
        // Each reference as (what it names, whether it has a fallback), or the diagnostic for a text that does not parse.
        let found: Result<Vec<(Reference, bool)>, (Code, String)> = if bare {
            expression::references(text)
                .map(|refs| refs.into_iter().map(|r| (r.reference, r.has_fallback)).collect())
                .map_err(|e| (Code::InvalidExpression, format!("{who}: condition `{text}` is not valid CEL ({e}); fix the expression, e.g. review.verdict == \"approve\"")))
        } else {
            Template::parse(text)
                .map(|t| t.uses().into_iter().map(|u| (u.reference.clone(), u.has_fallback)).collect())
                .map_err(|e| (Code::InvalidTemplate, format!("{who}: template does not parse: {e}; write holes as {{{{ node.field }}}} or {{{{ node.field || \"default\" }}}}, and a literal '{{{{' as \\{{{{")))
        };
        match found {
            Ok(references) => self.sites.extend(references.into_iter().map(|(reference, has_fallback)| Site {
                node,
                pointer: pointer.clone(),
                reference,
                has_fallback,
                scope,
                bare,
            })),
            Err((code, message)) => self.syntax.push(Diagnostic::new(code, node.map(|_| owner), pointer, message)),
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

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::HashSet;

    use super::*;

    pub(crate) const WORKED_EXAMPLE: &str = include_str!("fix-failing-tests.yaml");

    pub(crate) fn check(text: &str, options: &Options) -> Vec<Diagnostic> {
        validate(text, options).diagnostics
    }

    pub(crate) fn lint_options() -> Options {
        Options {
            lint: true,
            ..Options::default()
        }
    }

    /// A one-node-per-line workflow named `t` starting at `a`.
    pub(crate) fn wf(nodes: &str) -> String {
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


    /// One broken workflow per code: (expected code, expected node, YAML).
    pub(crate) fn failing_fixtures() -> Vec<(Code, Option<&'static str>, String)> {
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
            (Code::ScriptHoleQuoted, Some("a"), wf("  a: { type: script, config: { command: 'echo \"note {{ input.text }}\"' } }\n")),
            (Code::ConditionForm, Some("a"), wf("  a: { type: condition, config: { cases: [{ when: 'true', event: go }] }, transitions: { go: $end } }\n")),
        ]
    }


    /// One workflow per lint code that passes integrity but draws that warning: (code, node, YAML).
    pub(crate) fn lint_fixtures() -> Vec<(Code, Option<&'static str>, String)> {
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
}
