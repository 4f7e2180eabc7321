//! The `condition` executor (§7.2): a CEL `expression` (events `true` / `false`) or `cases` (the first `when` that
//! holds gives its event, else `default`). Variables are `input`, `run` and every node that has produced output;
//! a result that is not a boolean counts by truthiness (`null`, `false`, `0`, `""`, `[]`, `{}` are false). An
//! expression that fails to evaluate fails the node with `condition_error`.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::render;
use super::{Engine, Finish};
use crate::definition::{Node, check_expression_size as check_size, on_cel_stack};

pub(super) fn evaluate(engine: &mut Engine<'_>, node: &Node) -> Finish {
    let context = render::context(engine, &[]);
    engine.run.open.as_mut().expect("open").input = Some(Value::Object(node.config.clone()));
    if let Some(expression) = node.config_str("expression") {
        return match truth(expression, &context) {
            Ok(result) => Finish::ok(json!({ "result": result }), if result { "true" } else { "false" }),
            Err(e) => error(expression, e),
        };
    }
    let cases = node.config.get("cases").and_then(Value::as_array).cloned().unwrap_or_default();
    for (i, case) in cases.iter().enumerate() {
        let (Some(when), Some(event)) =
            (case.get("when").and_then(Value::as_str), case.get("event").and_then(Value::as_str))
        else {
            continue;
        };
        match truth(when, &context) {
            Ok(true) => return Finish::ok(json!({ "result": event, "matchedCase": i }), event),
            Ok(false) => {}
            Err(e) => return error(when, e),
        }
    }
    let default = node.config_str("default").unwrap_or("default");
    Finish::ok(json!({ "result": default }), default)
}

fn error(expression: &str, message: String) -> Finish {
    Finish::failed(
        json!({ "expression": expression }),
        format!("condition '{expression}' could not be evaluated: {message}"),
        Some("condition_error"),
    )
}

/// Evaluates `expression` against the roots of `context` and reads the result as a boolean. CEL runs on a stack of
/// its own, and an expression past the size limits is refused (see `definition::expression`).
fn truth(expression: &str, context: &Value) -> Result<bool, String> {
    check_size(expression)?;
    let json = on_cel_stack(|| {
        let program = cel::Program::compile(expression).map_err(|e| e.to_string())?;
        let mut cel_context = cel::Context::default();
        if let Value::Object(roots) = context {
            for (name, value) in roots {
                cel_context.add_variable_from_value(name.clone(), to_cel(value));
            }
        }
        let value = program.execute(&cel_context).map_err(|e| e.to_string())?;
        value.json().map_err(|e| e.to_string())
    })??;
    Ok(match json {
        Value::Null => false,
        Value::Bool(b) => b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    })
}

/// JSON as CEL: whole numbers are `int` (so `n - 3` works on a JSON `n`), others `double`.
fn to_cel(value: &Value) -> cel::Value {
    match value {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => cel::Value::Int(i),
            (None, Some(u)) => cel::Value::UInt(u),
            _ => cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(items) => cel::Value::List(Arc::new(items.iter().map(to_cel).collect())),
        Value::Object(map) => {
            let entries: HashMap<String, cel::Value> = map.iter().map(|(k, v)| (k.clone(), to_cel(v))).collect();
            cel::Value::from(entries)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_read_json_roots_and_count_by_truthiness() {
        let context = json!({ "input": { "strict": true, "n": 3 }, "review": { "verdict": "pass" } });
        assert_eq!(truth("review.verdict == 'pass' && input.n > 2", &context), Ok(true));
        assert_eq!(truth("input.strict", &context), Ok(true));
        assert_eq!(truth("review.verdict", &context), Ok(true));
        assert_eq!(truth("input.n - 3", &context), Ok(false));
        assert!(truth("missing.field", &context).is_err());
        assert!(truth("review.verdict < 3", &context).is_err());
    }

    mod hostile {
        use proptest::prelude::*;
        use serde_json::json;

        use crate::hostile_input::{bounded, corpus_strings, mutated, survives_hostile_texts};

        fn evaluate(text: &str) {
            let context = json!({ "input": { "n": 3, "tags": ["a", "b"] }, "review": { "verdict": "pass" } });
            let _ = super::super::truth(text, &context);
        }

        #[test]
        fn hostile_texts_neither_crash_nor_hang_evaluation() {
            survives_hostile_texts("CEL evaluation", evaluate);
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(200))]

            #[test]
            fn mutated_conditions_never_panic_or_hang(text in mutated(corpus_strings().1)) {
                bounded("CEL evaluation", text, evaluate);
            }
        }
    }
}
