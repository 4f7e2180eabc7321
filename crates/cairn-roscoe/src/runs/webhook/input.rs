//! A webhook request's JSON body made into the run's input. Without the trigger's `input:`, the body (an object) is
//! the input. With it, each value is rendered over `{ body }` with the engine's templates (`{{ body.ref }}`,
//! fallbacks `{{ body.x || "main" }}`): a value that is exactly one `{{ … }}` keeps the JSON type of what it names (a
//! number stays a number, a list a list), and is left out when that has no value, so the input's default applies;
//! other text renders as text; lists and objects are rendered inside. Values reach scripts only through templates in
//! their commands, which quote each value as one shell word.

use serde_json::{Map, Value, json};

use crate::definition::template::{Operand, Part, Segment, Template};

/// The run input of a request with `body` under a trigger whose `input` is `mapping`.
pub(super) fn map(mapping: Option<&Map<String, Value>>, body: &Value) -> Result<Value, String> {
    let Some(mapping) = mapping else {
        return match body {
            Value::Object(_) => Ok(body.clone()),
            _ => Err(format!(
                "the body must be a JSON object, which becomes the run's input (it is {}); send an object, or give the \
                 trigger an `input:` mapping that picks values out of the body",
                kind(body)
            )),
        };
    };
    let context = json!({ "body": body });
    let mut input = Map::new();
    for (name, value) in mapping {
        if let Some(value) = render(value, &context).map_err(|e| format!("webhook input '{name}': {e}"))? {
            input.insert(name.clone(), value);
        }
    }
    Ok(Value::Object(input))
}

/// `value` with its templates rendered over `context`; `None` for a lone reference without a value.
fn render(value: &Value, context: &Value) -> Result<Option<Value>, String> {
    match value {
        Value::String(text) => {
            let template = Template::parse(text).map_err(|e| format!("the template does not parse: {e}"))?;
            if let [Part::Hole(expr)] = template.parts.as_slice() {
                for operand in &expr.operands {
                    match operand {
                        Operand::Literal(text) => return Ok(Some(Value::String(text.clone()))),
                        Operand::Ref(reference) => {
                            if let Some(found) = lookup(&reference.root, &reference.path, context)? {
                                return Ok(Some(found.clone()));
                            }
                        }
                    }
                }
                return Ok(None);
            }
            for used in template.uses() {
                lookup(&used.reference.root, &[], context)?;
            }
            let rendered = template.render(context).map_err(|e| format!("'{}' has no value", e.reference))?;
            Ok(Some(Value::String(rendered.text)))
        }
        Value::Array(items) => {
            let items = items.iter().map(|v| render(v, context).map(|v| v.unwrap_or(Value::Null)));
            Ok(Some(Value::Array(items.collect::<Result<_, _>>()?)))
        }
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, v) in map {
                out.insert(key.clone(), render(v, context)?.unwrap_or(Value::Null));
            }
            Ok(Some(Value::Object(out)))
        }
        other => Ok(Some(other.clone())),
    }
}

/// What `root.path` names in `context`, when it has a value (not null, not empty text); an error for a root other
/// than `body`.
fn lookup<'c>(root: &str, path: &[Segment], context: &'c Value) -> Result<Option<&'c Value>, String> {
    let Some(mut found) = context.get(root) else {
        return Err(format!(
            "'{root}' is not known here: a webhook's input templates read only `body`, the request's JSON"
        ));
    };
    for segment in path {
        let next = match segment {
            Segment::Field(field) => found.get(field),
            Segment::Index(index) => found.get(*index),
        };
        match next {
            Some(value) => found = value,
            None => return Ok(None),
        }
    }
    Ok(Some(found).filter(|v| !v.is_null() && v.as_str() != Some("")))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(mapping: Value, body: Value) -> Result<Value, String> {
        map(mapping.as_object(), &body)
    }

    #[test]
    fn without_a_mapping_the_body_object_is_the_input() {
        assert_eq!(map(None, &json!({"ref": "main"})).unwrap(), json!({"ref": "main"}));
        assert!(map(None, &json!([1])).unwrap_err().contains("must be a JSON object"));
    }

    #[test]
    fn a_mapping_picks_typed_values_out_of_the_body() {
        let body = json!({"ref": "refs/heads/main", "pull_request": {"number": 7, "labels": ["a"]}, "empty": ""});
        let mapping = json!({
            "branch": "{{ body.ref }}",
            "number": "{{ body.pull_request.number }}",
            "labels": "{{ body.pull_request.labels }}",
            "title": "PR #{{ body.pull_request.number }} on {{ body.ref }}",
            "fallback": "{{ body.empty || body.missing || \"none\" }}",
            "missing": "{{ body.nothing.here }}",
            "fixed": 3,
            "nested": {"n": "{{ body.pull_request.number }}", "list": ["{{ body.ref }}", "{{ body.gone }}"]},
        });
        assert_eq!(
            check(mapping, body).unwrap(),
            json!({
                "branch": "refs/heads/main",
                "number": 7,
                "labels": ["a"],
                "title": "PR #7 on refs/heads/main",
                "fallback": "none",
                "fixed": 3,
                "nested": {"n": 7, "list": ["refs/heads/main", null]},
            })
        );
    }

    #[test]
    fn templates_read_only_the_body() {
        let error = check(json!({"x": "{{ input.ref }}"}), json!({})).unwrap_err();
        assert!(error.contains("webhook input 'x'") && error.contains("read only `body`"), "{error}");
        let error = check(json!({"x": "ref {{ run.id }}"}), json!({})).unwrap_err();
        assert!(error.contains("read only `body`"), "{error}");
        assert!(check(json!({"x": "{{ body.ref"}), json!({})).unwrap_err().contains("does not parse"));
    }
}
