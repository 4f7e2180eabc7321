//! Rendering templates inside the engine: the context object (`input`, `run`, every node's latest output) and the
//! two ways a template is used — as text (prompts, commands) or as a value (outputs, subworkflow inputs, lists).

use serde_json::{Map, Value, json};

use super::{Engine, Finish};
use crate::definition::template::{Operand, Part, Segment, Template};

/// The object templates read: `input`, `run` and each node's latest output, plus `extra` roots (`item`, `index`,
/// `results` inside a map node).
pub(super) fn context(engine: &Engine<'_>, extra: &[(&str, Value)]) -> Value {
    let run = &engine.run;
    let mut roots = run.context.nodes.clone();
    roots.insert("input".into(), run.input.clone());
    roots.insert(
        "run".into(),
        json!({ "id": run.id, "workflowId": run.workflow.id, "startedAt": crate::clock::rfc3339(run.started_at) }),
    );
    for (name, value) in extra {
        roots.insert((*name).to_owned(), value.clone());
    }
    Value::Object(roots)
}

/// Renders `text` as a template; a hole that cannot resolve fails the node (`template_unresolved`).
pub(super) fn text(engine: &mut Engine<'_>, text: &str, extra: &[(&str, Value)]) -> Result<String, Finish> {
    let template = parse(text)?;
    let rendered = template.render(&context(engine, extra)).map_err(unresolved)?;
    warn(engine, rendered.warnings);
    Ok(rendered.text)
}

/// Renders `text` once per item of a map, with `item` and `index` as roots; the run's context is read once, not
/// once per item (it may hold the whole list).
pub(super) fn per_item(engine: &mut Engine<'_>, text: &str, items: &[Value]) -> Result<Vec<String>, Finish> {
    let template = parse(text)?;
    let mut context = context(engine, &[]);
    let mut texts = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        context["item"] = item.clone();
        context["index"] = json!(index);
        let rendered = template.render(&context).map_err(unresolved)?;
        warn(engine, rendered.warnings);
        texts.push(rendered.text);
    }
    Ok(texts)
}

fn unresolved(unresolved: crate::definition::template::Unresolved) -> Finish {
    Finish::failed(
        Value::Null,
        format!("template reference '{}' has no value (the node has not run)", unresolved.reference),
        Some("template_unresolved"),
    )
}

/// Renders every string inside `value` as a template. A string that is exactly one `{{ ref }}` keeps the referenced
/// value's JSON type (a list stays a list); other strings render as text.
pub(super) fn value(engine: &mut Engine<'_>, value: &Value) -> Result<Value, Finish> {
    match value {
        Value::String(text) => {
            let template = parse(text)?;
            if let [Part::Hole(expr)] = template.parts.as_slice() {
                let context = context(engine, &[]);
                for operand in &expr.operands {
                    match operand {
                        Operand::Literal(text) => return Ok(Value::String(text.clone())),
                        Operand::Ref(reference) => {
                            let mut found = context.get(&reference.root);
                            for segment in &reference.path {
                                found = found.and_then(|v| match segment {
                                    Segment::Field(f) => v.get(f),
                                    Segment::Index(i) => v.get(*i),
                                });
                            }
                            match found {
                                Some(v) if v.is_string() && v.as_str() != Some("") => break,
                                Some(v) if !v.is_null() && !v.is_string() => return Ok(v.clone()),
                                _ => {}
                            }
                        }
                    }
                }
            }
            self::text(engine, text, &[]).map(Value::String)
        }
        Value::Array(items) => items.iter().map(|v| self::value(engine, v)).collect::<Result<_, _>>().map(Value::Array),
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                out.insert(k.clone(), self::value(engine, v)?);
            }
            Ok(Value::Object(out))
        }
        other => Ok(other.clone()),
    }
}

fn parse(text: &str) -> Result<Template, Finish> {
    Template::parse(text)
        .map_err(|e| Finish::failed(Value::Null, format!("template does not parse: {e}"), Some("template_unresolved")))
}

/// Adds template warnings to the open node run.
pub(super) fn warn(engine: &mut Engine<'_>, warnings: Vec<String>) {
    if let Some(open) = engine.run.open.as_mut() {
        for w in warnings {
            if !open.warnings.contains(&w) {
                open.warnings.push(w);
            }
        }
    }
}
