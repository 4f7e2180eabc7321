//! A workflow as a picture (§13.8, `get_workflow_diagram`): Mermaid `flowchart TD` text plus the nodes and edges
//! as data, so a chat host can show the workflow and the web UI can draw its own graph.
//!
//! Shapes follow the node type: condition and ai_judge are decisions (rhombus), human a hexagon, fan-out nodes
//! subroutines, ai_agent a rounded box and script a plain box. Each edge carries its event; an edge that re-enters
//! a node with `maxIterations` from inside its own cycle says so (`failure (max 3)`). `$end` and `$fail` are
//! terminal circles, a start circle points at `initial`, and a sink node gets a dotted edge to the end.
//!
//! Every Mermaid id is generated (`n_<id>` with unsafe characters escaped), so no node id can break the syntax or
//! collide with a keyword, and every piece of user text is quoted with Mermaid's `#code;` entities. Run overlays
//! go through [`diagram_with_status`]; this module knows nothing about runs beyond a [`NodeStatus`] per node.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use serde::Serialize;

use crate::definition::{NodeType, Target, Workflow};

/// The result of `get_workflow_diagram`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagram {
    /// Mermaid `flowchart TD` text.
    pub mermaid: String,
    /// One entry per workflow node, in file order.
    pub nodes: Vec<DiagramNode>,
    /// One entry per transition, in file order.
    pub edges: Vec<DiagramEdge>,
}

/// A node of the diagram.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagramNode {
    /// The node id.
    pub id: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: NodeType,
    /// Its label, or its id when it has none.
    pub label: String,
    /// Its status in the overlaid run, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<NodeStatus>,
}

/// A transition of the diagram.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DiagramEdge {
    /// The node the transition leaves.
    pub from: String,
    /// The event that takes it.
    pub event: String,
    /// Its target: a node id, `$end` or `$fail`.
    pub to: String,
}

/// The status of a node in a run, for the overlay (§6.2 node-run statuses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeStatus {
    /// Executing now.
    Running,
    /// Waiting for the host, a human or a child run.
    Paused,
    /// Finished.
    Completed,
    /// Failed.
    Failed,
    /// Stopped by a cancel.
    Cancelled,
}

impl NodeStatus {
    /// All statuses, in a fixed order.
    pub const ALL: [NodeStatus; 5] = [
        NodeStatus::Running,
        NodeStatus::Paused,
        NodeStatus::Completed,
        NodeStatus::Failed,
        NodeStatus::Cancelled,
    ];

    /// The lowercase name (also the Mermaid class name).
    pub fn as_str(self) -> &'static str {
        match self {
            NodeStatus::Running => "running",
            NodeStatus::Paused => "paused",
            NodeStatus::Completed => "completed",
            NodeStatus::Failed => "failed",
            NodeStatus::Cancelled => "cancelled",
        }
    }

    fn style(self) -> &'static str {
        match self {
            NodeStatus::Running => "fill:#cfe2ff,stroke:#0d6efd",
            NodeStatus::Paused => "fill:#fff3cd,stroke:#b58105",
            NodeStatus::Completed => "fill:#d1e7dd,stroke:#198754",
            NodeStatus::Failed => "fill:#f8d7da,stroke:#dc3545",
            NodeStatus::Cancelled => "fill:#e2e3e5,stroke:#6c757d",
        }
    }
}

/// The diagram of a workflow, without a run.
pub fn diagram(workflow: &Workflow) -> Diagram {
    diagram_with_status(workflow, |_| None)
}

/// The diagram with a run overlaid: `status(node_id)` gives each node's status, shown as the `status` field and as
/// a Mermaid class.
pub fn diagram_with_status(
    workflow: &Workflow,
    status: impl Fn(&str) -> Option<NodeStatus>,
) -> Diagram {
    let nodes: Vec<DiagramNode> = workflow
        .nodes
        .iter()
        .map(|n| DiagramNode {
            id: n.id.clone(),
            kind: n.kind,
            label: n.label.clone().unwrap_or_else(|| n.id.clone()),
            status: status(&n.id),
        })
        .collect();
    let edges: Vec<DiagramEdge> = workflow
        .nodes
        .iter()
        .flat_map(|n| {
            n.transitions.iter().map(|t| DiagramEdge {
                from: n.id.clone(),
                event: t.event.clone(),
                to: t.target.as_str().to_owned(),
            })
        })
        .collect();
    let mermaid = Mermaid::new(workflow).render(workflow, &nodes);
    Diagram {
        mermaid,
        nodes,
        edges,
    }
}

const START: &str = "t_start";
const END: &str = "t_end";
const FAIL: &str = "t_fail";

/// The Mermaid ids of a workflow's nodes and the targets that name no node.
struct Mermaid<'w> {
    ids: HashMap<&'w str, String>,
    missing: Vec<&'w str>,
}

impl<'w> Mermaid<'w> {
    fn new(workflow: &'w Workflow) -> Self {
        let mut names: Vec<&str> = workflow.nodes.iter().map(|n| n.id.as_str()).collect();
        let mut missing = Vec::new();
        for node in &workflow.nodes {
            for t in &node.transitions {
                if let Target::Node(id) = &t.target
                    && !names.contains(&id.as_str())
                {
                    names.push(id);
                    missing.push(id.as_str());
                }
            }
        }
        if !names.contains(&workflow.initial.as_str()) {
            names.push(&workflow.initial);
            missing.push(&workflow.initial);
        }
        // Escaping keeps ids readable; `n_a_x2d_b` could still be both `a-b` and `a_x2d_b`, so any clash falls
        // back to the (unique) position, under a prefix no escaped id has.
        let escaped: Vec<String> = names.iter().map(|n| escape_id(n)).collect();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for e in &escaped {
            *seen.entry(e.as_str()).or_default() += 1;
        }
        let ids = names
            .iter()
            .zip(&escaped)
            .enumerate()
            .map(|(i, (name, e))| {
                let id = if seen[e.as_str()] > 1 {
                    format!("i{i}")
                } else {
                    e.clone()
                };
                (*name, id)
            })
            .collect();
        Mermaid { ids, missing }
    }

    fn id(&self, target: &Target) -> &str {
        match target {
            Target::Node(id) => &self.ids[id.as_str()],
            Target::End => END,
            Target::Fail => FAIL,
        }
    }

    fn render(&self, workflow: &Workflow, nodes: &[DiagramNode]) -> String {
        let mut out = String::from("flowchart TD\n");
        let line = |out: &mut String, text: std::fmt::Arguments<'_>| {
            let _ = writeln!(out, "    {text}");
        };
        line(&mut out, format_args!("{START}((\"start\"))"));
        for (node, shown) in workflow.nodes.iter().zip(nodes) {
            let text = format!("{}<br/>{}", label(&shown.label), node.kind.as_str());
            let (open, close) = shape(node.kind);
            line(
                &mut out,
                format_args!("{}{open}\"{text}\"{close}", self.ids[node.id.as_str()]),
            );
        }
        for missing in &self.missing {
            line(
                &mut out,
                format_args!(
                    "{}[\"{} (no such node)\"]",
                    self.ids[missing],
                    label(missing)
                ),
            );
        }
        let targets: Vec<&Target> = workflow
            .nodes
            .iter()
            .flat_map(|n| n.transitions.iter().map(|t| &t.target))
            .collect();
        let sinks = workflow.nodes.iter().any(|n| n.is_sink());
        let ends = sinks || targets.contains(&&Target::End);
        let fails = targets.contains(&&Target::Fail);
        if ends {
            line(&mut out, format_args!("{END}((\"end\"))"));
        }
        if fails {
            line(&mut out, format_args!("{FAIL}((\"fail\"))"));
        }
        line(
            &mut out,
            format_args!("{START} --> {}", self.ids[workflow.initial.as_str()]),
        );
        let loops = Loops::new(workflow);
        for node in &workflow.nodes {
            let from = &self.ids[node.id.as_str()];
            for t in &node.transitions {
                let mut event = label(&t.event);
                if let Target::Node(to) = &t.target
                    && let Some(max) = workflow.node(to).and_then(|n| n.max_iterations)
                    && loops.on_cycle(&node.id, to)
                {
                    let _ = write!(event, " (max {max})");
                }
                line(
                    &mut out,
                    format_args!("{from} -->|\"{event}\"| {}", self.id(&t.target)),
                );
            }
            if node.is_sink() {
                line(&mut out, format_args!("{from} -.-> {END}"));
            }
        }
        line(
            &mut out,
            format_args!("classDef terminal fill:#212529,stroke:#212529,color:#fff"),
        );
        line(
            &mut out,
            format_args!("classDef failTerminal fill:#dc3545,stroke:#dc3545,color:#fff"),
        );
        let mut terminals = vec![START];
        if ends {
            terminals.push(END);
        }
        line(
            &mut out,
            format_args!("class {} terminal", terminals.join(",")),
        );
        if fails {
            line(&mut out, format_args!("class {FAIL} failTerminal"));
        }
        if !self.missing.is_empty() {
            line(
                &mut out,
                format_args!("classDef missing stroke:#dc3545,stroke-dasharray:4 3"),
            );
            let ids: Vec<&str> = self.missing.iter().map(|m| self.ids[m].as_str()).collect();
            line(&mut out, format_args!("class {} missing", ids.join(",")));
        }
        for status in NodeStatus::ALL {
            let ids: Vec<&str> = nodes
                .iter()
                .filter(|n| n.status == Some(status))
                .map(|n| self.ids[n.id.as_str()].as_str())
                .collect();
            if !ids.is_empty() {
                line(
                    &mut out,
                    format_args!("classDef {} {}", status.as_str(), status.style()),
                );
                line(
                    &mut out,
                    format_args!("class {} {}", ids.join(","), status.as_str()),
                );
            }
        }
        out
    }
}

/// The Mermaid brackets of a node type's shape.
fn shape(kind: NodeType) -> (&'static str, &'static str) {
    match kind {
        NodeType::Condition | NodeType::AiJudge => ("{", "}"),
        NodeType::Human => ("{{", "}}"),
        _ if kind.is_fanout() => ("[[", "]]"),
        NodeType::AiAgent => ("(", ")"),
        _ => ("[", "]"),
    }
}

/// Which transitions lie on a cycle: `u → v` does when `v` reaches `u`.
struct Loops<'w> {
    successors: HashMap<&'w str, Vec<&'w str>>,
}

impl<'w> Loops<'w> {
    fn new(workflow: &'w Workflow) -> Self {
        let successors = workflow
            .nodes
            .iter()
            .map(|n| {
                let next = n
                    .transitions
                    .iter()
                    .filter_map(|t| match &t.target {
                        Target::Node(id) => Some(id.as_str()),
                        _ => None,
                    })
                    .collect();
                (n.id.as_str(), next)
            })
            .collect();
        Loops { successors }
    }

    fn on_cycle(&self, from: &str, to: &str) -> bool {
        let mut seen: HashSet<&str> = HashSet::new();
        let mut stack = vec![to];
        while let Some(at) = stack.pop() {
            if at == from {
                return true;
            }
            if seen.insert(at) {
                stack.extend(self.successors.get(at).into_iter().flatten().copied());
            }
        }
        false
    }
}

/// A Mermaid node id for a workflow node id: `n_` then the id, with every character outside `[A-Za-z0-9_]` written
/// as `_x<hex>_`. The prefix keeps ids off Mermaid keywords (`end`, `graph`, …) and off the `o`/`x` edge endings.
fn escape_id(id: &str) -> String {
    let mut out = String::from("n_");
    for c in id.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else {
            let _ = write!(out, "_x{:x}_", u32::from(c));
        }
    }
    out
}

/// User text for inside a quoted Mermaid label: characters Mermaid or HTML would read as syntax become `#<code>;`
/// entities, line breaks and control characters become spaces.
fn label(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' | '#' | '&' | '<' | '>' | '[' | ']' | '{' | '}' | '(' | ')' | '|' | '`' | '%'
            | ';' | '\\' => {
                let _ = write!(out, "#{};", u32::from(c));
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::{Node, Transition};
    use serde_json::Map;

    fn check(yaml: &str) -> Diagram {
        diagram(&crate::definition::parse(yaml, None).expect("valid workflow"))
    }

    fn node(id: &str, kind: NodeType, label: Option<&str>, transitions: &[(&str, &str)]) -> Node {
        Node {
            id: id.into(),
            kind,
            label: label.map(Into::into),
            description: None,
            config: Map::new(),
            transitions: transitions
                .iter()
                .map(|(event, target)| Transition {
                    event: (*event).into(),
                    target: Target::from_text(target),
                })
                .collect(),
            max_iterations: None,
            timeout_ms: None,
        }
    }

    fn workflow(nodes: Vec<Node>) -> Workflow {
        Workflow {
            id: "w".into(),
            description: None,
            version: 1,
            initial: nodes[0].id.clone(),
            inputs: None,
            outputs: Map::new(),
            defaults: Map::new(),
            execution: None,
            budget: None,
            nodes,
            triggers: Vec::new(),
        }
    }

    #[test]
    fn the_worked_example() {
        let d = check(include_str!("definition/fix-failing-tests.yaml"));
        assert_eq!(
            d.mermaid,
            r##"flowchart TD
    t_start(("start"))
    n_run_tests["Run the test suite<br/>script"]
    n_diagnose("Diagnose and fix<br/>ai_agent")
    n_review[["Is the branch safe to merge?<br/>consensus"]]
    n_ask_human{{"Merge?<br/>human"}}
    n_merge["merge<br/>script"]
    t_end(("end"))
    t_start --> n_run_tests
    n_run_tests -->|"success"| n_review
    n_run_tests -->|"failure (max 3)"| n_diagnose
    n_diagnose -->|"success"| n_run_tests
    n_diagnose -->|"max_iterations"| n_ask_human
    n_review -->|"approve"| n_ask_human
    n_review -->|"reject (max 3)"| n_diagnose
    n_review -->|"no_consensus"| n_ask_human
    n_ask_human -->|"merge"| n_merge
    n_ask_human -->|"stop"| t_end
    n_merge -.-> t_end
    classDef terminal fill:#212529,stroke:#212529,color:#fff
    classDef failTerminal fill:#dc3545,stroke:#dc3545,color:#fff
    class t_start,t_end terminal
"##
        );
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(
            json["nodes"][1],
            serde_json::json!({"id": "diagnose", "type": "ai_agent", "label": "Diagnose and fix"})
        );
        assert_eq!(json["nodes"][4]["label"], "merge");
        assert_eq!(
            json["edges"][7],
            serde_json::json!({"from": "ask_human", "event": "merge", "to": "merge"})
        );
        assert_eq!(d.edges.len(), 9);
        assert_eq!(d.edges[8].to, "$end");
    }

    #[test]
    fn shapes_by_type_and_every_transition_kind() {
        let d = check(
            r#"
name: w
initial: c
nodes:
  c:
    type: condition
    config: { expression: "input.x == 1" }
    transitions: { "true": j, "false": $fail }
  j:
    type: ai_judge
    config: { prompt: "ok?" }
    transitions: { yes_: rr, failure: $fail }
  rr:
    type: round_robin
    config: { candidates: [a, b], criterion: best }
    transitions: { success: m }
  m:
    type: map
    config: { items: [1, 2], prompt: "{{ item }}" }
    transitions: { success: s }
  s:
    type: subworkflow
    config: { workflow: other }
    transitions: { success: $end }
"#,
        );
        let m = &d.mermaid;
        for expected in [
            r#"n_c{"c<br/>condition"}"#,
            r#"n_j{"j<br/>ai_judge"}"#,
            r#"n_rr[["rr<br/>round_robin"]]"#,
            r#"n_m[["m<br/>map"]]"#,
            r#"n_s[["s<br/>subworkflow"]]"#,
            r#"t_end(("end"))"#,
            r#"t_fail(("fail"))"#,
            r#"n_c -->|"true"| n_j"#,
            r#"n_c -->|"false"| t_fail"#,
            r#"n_j -->|"yes_"| n_rr"#,
            r#"n_j -->|"failure"| t_fail"#,
            r#"n_s -->|"success"| t_end"#,
            "class t_start,t_end terminal",
            "class t_fail failTerminal",
        ] {
            assert!(m.contains(expected), "missing {expected} in\n{m}");
        }
        // No sink: nothing is dotted.
        assert!(!m.contains("-.->"), "{m}");
        let to: Vec<_> = d.edges.iter().map(|e| e.to.as_str()).collect();
        assert_eq!(to, ["j", "$fail", "rr", "$fail", "m", "s", "$end"]);
    }

    #[test]
    fn terminals_appear_only_when_used() {
        let d = diagram(&workflow(vec![node(
            "a",
            NodeType::Script,
            None,
            &[("success", "a"), ("failure", "$fail")],
        )]));
        assert!(d.mermaid.contains(r#"t_fail(("fail"))"#));
        assert!(!d.mermaid.contains("t_end"), "{}", d.mermaid);
        // A self-loop into a capped node is a loop edge.
        let mut looped = workflow(vec![node("a", NodeType::Script, None, &[("success", "a")])]);
        looped.nodes[0].max_iterations = Some(2);
        assert!(
            diagram(&looped)
                .mermaid
                .contains(r#"n_a -->|"success (max 2)"| n_a"#)
        );
        // A capped node entered from outside any cycle is not marked.
        let mut straight = workflow(vec![
            node("a", NodeType::Script, None, &[("success", "b")]),
            node("b", NodeType::Script, None, &[]),
        ]);
        straight.nodes[1].max_iterations = Some(2);
        let m = diagram(&straight).mermaid;
        assert!(
            m.contains(r#"n_a -->|"success"| n_b"#) && m.contains("n_b -.-> t_end"),
            "{m}"
        );
    }

    #[test]
    fn hostile_ids_and_labels_are_escaped() {
        let d = diagram(&workflow(vec![
            node(
                "end",
                NodeType::Human,
                Some("Say \"hi\" <b>[x]</b> {y} (z) a|b `c` #quot; %%{init: {}}%%;\nnext"),
                &[("go \"on\" |x|", "a-b"), ("other", "a_x2d_b")],
            ),
            node("a-b", NodeType::AiAgent, None, &[("success", "o")]),
            node("a_x2d_b", NodeType::Script, None, &[("success", "$end")]),
            node("o", NodeType::Script, None, &[("success", "ghost --> x")]),
        ]));
        let m = &d.mermaid;
        assert!(
            m.contains(
                "n_end{{\"Say #34;hi#34; #60;b#62;#91;x#93;#60;/b#62; #123;y#125; #40;z#41; a#124;b #96;c#96; \
                 #35;quot#59; #37;#37;#123;init: #123;#125;#125;#37;#37;#59; next<br/>human\"}}"
            ),
            "{m}"
        );
        // `a-b` and `a_x2d_b` escape alike, so both fall back to their positions.
        assert!(m.contains("i1(\"a-b<br/>ai_agent\")"), "{m}");
        assert!(m.contains("i2[\"a_x2d_b<br/>script\"]"), "{m}");
        assert!(
            m.contains("n_end -->|\"go #34;on#34; #124;x#124;\"| i1"),
            "{m}"
        );
        assert!(
            m.contains("n_o -->|\"success\"| n_ghost_x20__x2d__x2d__x3e__x20_x"),
            "{m}"
        );
        assert!(
            m.contains("n_ghost_x20__x2d__x2d__x3e__x20_x[\"ghost --#62; x (no such node)\"]"),
            "{m}"
        );
        assert!(
            m.contains("class n_ghost_x20__x2d__x2d__x3e__x20_x missing"),
            "{m}"
        );
        // Every line outside quotes is made of safe characters only.
        for l in m.lines().skip(1) {
            let outside: String = l.split('"').step_by(2).collect();
            assert!(
                outside
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || " _-.>|:,#()[]{}=".contains(c)),
                "unsafe line {l}"
            );
        }
        // The data keeps the text as written.
        assert_eq!(
            d.nodes[0].label.lines().next(),
            Some("Say \"hi\" <b>[x]</b> {y} (z) a|b `c` #quot; %%{init: {}}%%;")
        );
        assert_eq!(d.edges[0].event, "go \"on\" |x|");
    }

    #[test]
    fn the_overlay_adds_statuses_and_classes() {
        let w = workflow(vec![
            node("a", NodeType::Script, None, &[("success", "b")]),
            node("b", NodeType::AiAgent, None, &[("success", "c")]),
            node("c", NodeType::Script, None, &[]),
        ]);
        let d = diagram_with_status(&w, |id| match id {
            "a" => Some(NodeStatus::Completed),
            "b" => Some(NodeStatus::Paused),
            _ => None,
        });
        assert!(d.mermaid.contains("class n_b paused\n"), "{}", d.mermaid);
        assert!(d.mermaid.contains("class n_a completed\n"), "{}", d.mermaid);
        assert!(
            d.mermaid.contains("classDef paused fill:#fff3cd"),
            "{}",
            d.mermaid
        );
        assert!(!d.mermaid.contains("failed"), "{}", d.mermaid);
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["nodes"][1]["status"], "paused");
        assert!(json["nodes"][2].get("status").is_none());
    }
}
