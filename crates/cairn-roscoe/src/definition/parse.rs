//! YAML text → [`Workflow`]: read the document with `cairn-yaml`, run the schema stage, build the model.
//!
//! Everything reported here is a schema-stage diagnostic (`invalid_config`, `invalid_id`, `name_mismatch`,
//! `reserved_node_id`). The document is kept beside the model so later stages can give line and column.

use std::sync::LazyLock;

use cairn_yaml::Document;
use regex::Regex;
use serde_json::{Map, Value};

use super::diagnostic::{Code, Diagnostic};
use super::model::{
    Input, InputType, Node, NodeType, RESERVED_NODE_IDS, Target, Transition, Workflow,
};
use super::schema;
use super::trigger_check;

static ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("^[a-z0-9][a-z0-9_-]{0,63}$").expect("valid regex"));

/// Whether `id` is a valid workflow id.
pub(crate) fn is_valid_id(id: &str) -> bool {
    ID.is_match(id)
}

/// Reads workflow YAML: PyYAML's reading, except that a key repeated in one mapping is an error naming both lines
/// (§5: the schema stage needs the YAML to parse with no duplicate keys), and so is a key YAML reads as a boolean or
/// null (`true:`, `on:`, `no:`; every key of a workflow is text), with the quoting that fixes it.
pub(crate) fn read_yaml(text: &str) -> Result<Document, String> {
    cairn_yaml::parse_with(text, cairn_yaml::Options::strict_keys())
}

/// A schema error about a value YAML read as a boolean or null from a word (`prompt: no`), with the quoting that
/// makes it the text written.
fn with_quoting(mut d: Diagnostic, doc: &Document) -> Diagnostic {
    if let Some(word) = doc.word_at(&d.pointer) {
        let read = doc.value.pointer(&d.pointer).map_or_else(|| "null".to_owned(), Value::to_string);
        d.message.push_str(&format!(
            " (YAML reads the unquoted `{word}` as {read}; for the text, put it in quotes: \"{word}\")"
        ));
    }
    d
}

/// Parses and schema-checks `text`; `id` is the id the file is stored under, when known.
pub(crate) fn parse(text: &str, id: Option<&str>) -> Result<(Workflow, Document), Vec<Diagnostic>> {
    let doc = read_yaml(text).map_err(|message| vec![yaml_error(&message)])?;
    let mut found = Vec::new();
    if !doc.value.is_object() {
        let d = Diagnostic::new(
            Code::InvalidConfig,
            None,
            "",
            "a workflow must be a YAML mapping with `initial` and `nodes`",
        );
        return Err(vec![locate(d, &doc)]);
    }
    let name = doc.value.get("name").and_then(Value::as_str);
    let id = match (id, name) {
        (Some(id), _) if !is_valid_id(id) => {
            found.push(invalid_id(id, ""));
            id.to_owned()
        }
        (Some(id), Some(name)) if name != id => {
            found.push(Diagnostic::new(
                Code::NameMismatch,
                None,
                "/name",
                format!(
                    "name '{name}' must equal the workflow id '{id}'; set `name: {id}` or remove it"
                ),
            ));
            id.to_owned()
        }
        (Some(id), _) => id.to_owned(),
        (None, Some(name)) => {
            if !is_valid_id(name) {
                found.push(invalid_id(name, "/name"));
            }
            name.to_owned()
        }
        (None, None) => {
            found.push(Diagnostic::new(
                Code::InvalidConfig,
                None,
                "/name",
                "the workflow has no `name` and no id was given; add `name: <id>`",
            ));
            String::new()
        }
    };
    let reserved: Vec<&String> = doc.value["nodes"]
        .as_object()
        .map(|nodes| {
            nodes
                .keys()
                .filter(|k| RESERVED_NODE_IDS.contains(&k.as_str()))
                .collect()
        })
        .unwrap_or_default();
    for key in &reserved {
        found.push(Diagnostic::new(
            Code::ReservedNodeId,
            Some(key),
            format!("/nodes/{key}"),
            format!(
                "node '{key}': '{key}' is reserved ({}) and cannot be a node id; rename the node",
                RESERVED_NODE_IDS.join(", ")
            ),
        ));
    }
    // The schema also rejects reserved ids (at `/nodes`); the dedicated diagnostic above says it better.
    let schema_errors = schema::check(&doc.value).into_iter().filter(|d| {
        !(d.pointer == "/nodes" && !reserved.is_empty() && d.message.contains("is not allowed for"))
    });
    found.extend(schema_errors.map(|d| with_quoting(d, &doc)));
    if !found.is_empty() {
        return Err(found.into_iter().map(|d| locate(d, &doc)).collect());
    }
    let mut workflow = build(id, &doc.value);
    workflow.triggers =
        trigger_check::read(&doc.value, &workflow).map_err(|found| found.into_iter().map(|d| locate(d, &doc)).collect::<Vec<_>>())?;
    Ok((workflow, doc))
}

/// Fills line and column from the document.
pub(crate) fn locate(mut d: Diagnostic, doc: &Document) -> Diagnostic {
    if let Some((line, column)) = doc.position(&d.pointer) {
        d.line = Some(line);
        d.column = Some(column);
    }
    d
}

fn invalid_id(id: &str, pointer: &str) -> Diagnostic {
    Diagnostic::new(
        Code::InvalidId,
        None,
        pointer,
        format!(
            "workflow id '{id}' is invalid: use 1–64 of a-z, 0-9, '_' and '-', starting with a letter or digit"
        ),
    )
}

fn yaml_error(message: &str) -> Diagnostic {
    static AT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"line (\d+)[, ]+col(?:umn)? (\d+)").expect("valid regex"));
    let mut d = Diagnostic::new(
        Code::InvalidConfig,
        None,
        "",
        format!("the workflow is not valid YAML: {message}"),
    );
    if let Some(c) = AT.captures(message) {
        d.line = c[1].parse().ok();
        d.column = c[2].parse().ok();
    }
    d
}

/// Builds the model from a schema-valid document.
fn build(id: String, value: &Value) -> Workflow {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    let object = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let inputs = value
        .get("inputs")
        .and_then(Value::as_object)
        .map(|inputs| {
            inputs
                .iter()
                .map(|(name, spec)| Input {
                    name: name.clone(),
                    ty: spec["type"]
                        .as_str()
                        .and_then(InputType::from_name)
                        .unwrap_or(InputType::String),
                    required: spec
                        .get("required")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    default: spec.get("default").cloned(),
                    description: text(spec, "description"),
                    allowed: spec.get("enum").and_then(Value::as_array).cloned(),
                })
                .collect()
        });
    let nodes = value["nodes"]
        .as_object()
        .map(|nodes| {
            nodes
                .iter()
                .map(|(id, node)| build_node(id, node))
                .collect()
        })
        .unwrap_or_default();
    Workflow {
        id,
        description: text(value, "description"),
        version: 1,
        initial: text(value, "initial").unwrap_or_default(),
        inputs,
        outputs: object(value, "outputs"),
        defaults: object(value, "defaults"),
        execution: text(value, "execution"),
        budget: value.get("budget").cloned(),
        nodes,
        triggers: Vec::new(),
    }
}

fn build_node(id: &str, node: &Value) -> Node {
    let transitions = node
        .get("transitions")
        .and_then(Value::as_object)
        .map(|t| {
            t.iter()
                .map(|(event, target)| Transition {
                    event: event.clone(),
                    target: Target::from_text(target.as_str().unwrap_or_default()),
                })
                .collect()
        })
        .unwrap_or_default();
    Node {
        id: id.to_owned(),
        kind: node["type"]
            .as_str()
            .and_then(NodeType::from_name)
            .unwrap_or(NodeType::AiAgent),
        label: node.get("label").and_then(Value::as_str).map(str::to_owned),
        description: node
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned),
        config: node
            .get("config")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_else(Map::new),
        transitions,
        max_iterations: node
            .get("maxIterations")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok()),
        timeout_ms: node.get("timeoutMs").and_then(Value::as_u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Found = Vec<(Code, Option<u64>, Option<u64>)>;

    fn check(text: &str, id: Option<&str>) -> Result<Workflow, Found> {
        parse(text, id)
            .map(|(w, _)| w)
            .map_err(|ds| ds.into_iter().map(|d| (d.code, d.line, d.column)).collect())
    }

    #[test]
    fn keeps_node_and_transition_order() {
        let text = "name: w\ninitial: z\nnodes:\n  z: { type: ai_agent, config: { prompt: p }, transitions: { b: y, a: $end } }\n  y: { type: human, config: { prompt: q }, transitions: { ok: $fail } }\n  a: { type: script, config: { command: ls } }\n";
        let w = check(text, None).unwrap();
        let ids: Vec<_> = w.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["z", "y", "a"]);
        let events: Vec<_> = w.nodes[0]
            .transitions
            .iter()
            .map(|t| (t.event.as_str(), t.target.clone()))
            .collect();
        assert_eq!(
            events,
            [("b", Target::Node("y".into())), ("a", Target::End)]
        );
        assert_eq!(w.nodes[1].target("ok"), Some(&Target::Fail));
        assert!(w.nodes[2].is_sink());
        assert_eq!(w.id, "w");
        assert!(w.inputs.is_none());
    }

    #[test]
    fn yaml_errors_carry_line_and_column() {
        let err = check("name: w\nnodes: [\n  a: b\n", None).unwrap_err();
        assert_eq!(err.len(), 1);
        assert_eq!(err[0].0, Code::InvalidConfig);
        assert!(err[0].1.is_some() && err[0].2.is_some(), "{err:?}");
    }

    #[test]
    fn schema_errors_carry_line_and_column() {
        let err = check(
            "name: w\ninitial: a\nnodes:\n  a:\n    type: ai_agent\n    confg: {}\n",
            None,
        )
        .unwrap_err();
        assert!(
            err.iter()
                .any(|e| e.0 == Code::InvalidConfig && e.1 == Some(5)),
            "{err:?}"
        );
    }

    #[test]
    fn name_and_id_rules() {
        let text =
            "name: other\ninitial: a\nnodes: { a: { type: script, config: { command: ls } } }\n";
        assert_eq!(check(text, Some("w")).unwrap_err()[0].0, Code::NameMismatch);
        assert_eq!(
            check(text, Some("Bad/Id")).unwrap_err()[0].0,
            Code::InvalidId
        );
        assert_eq!(
            check(&text.replace("name: other", "name: Other"), None).unwrap_err()[0].0,
            Code::InvalidId
        );
        let nameless = "initial: a\nnodes: { a: { type: script, config: { command: ls } } }\n";
        assert_eq!(check(nameless, Some("w")).unwrap().id, "w");
        assert_eq!(check(nameless, None).unwrap_err()[0].0, Code::InvalidConfig);
    }

    #[test]
    fn reserved_node_ids_are_rejected() {
        let text = "name: w\ninitial: input\nnodes: { input: { type: script, config: { command: ls } } }\n";
        let err = check(text, None).unwrap_err();
        assert_eq!(
            err.iter().map(|e| e.0).collect::<Vec<_>>(),
            [Code::ReservedNodeId],
            "{err:?} {:?}",
            parse(text, None).err()
        );
    }
}
