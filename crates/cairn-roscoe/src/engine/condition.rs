//! The `condition` executor (§7.2): a CEL `expression` (events `true` / `false`) or `cases` (the first `when` that
//! holds gives its event, else `default`). Variables are `input`, `run` and every node that has produced output;
//! a result that is not a boolean counts by truthiness (`null`, `false`, `0`, `""`, `[]`, `{}` are false). An
//! expression that fails to evaluate fails the node with `condition_error`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::cel_meter::{self, Meter};
use super::render;
use super::{Engine, Finish};
use crate::definition::{Node, check_expression_size as check_size, on_cel_stack};

pub(super) fn evaluate(engine: &mut Engine<'_>, node: &Node) -> Finish {
    let context = render::context(engine, &[]);
    let deadline = engine.env.deadline().map(|at| {
        let left = u64::try_from(at.saturating_sub(engine.env.now())).unwrap_or(0);
        Instant::now() + Duration::from_millis(left)
    });
    let truth = |expression: &str, context: &Value| truth(expression, context, deadline);
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
/// its own, an expression past the size limits is refused (see `definition::expression`), and the evaluation stops
/// past its step budget or `deadline` (see `cel_meter`).
fn truth(expression: &str, context: &Value, deadline: Option<Instant>) -> Result<bool, String> {
    check_size(expression)?;
    let json = on_cel_stack(|| {
        let mut parsed = cel::parser::Parser::default().parse(expression).map_err(|e| e.to_string())?;
        cel_meter::instrument(&mut parsed);
        let meter = Meter::new(deadline);
        let mut cel_context = cel::Context::default();
        meter.install(&mut cel_context);
        if let Value::Object(roots) = context {
            for (name, value) in roots {
                cel_context.add_variable_from_value(name.clone(), to_cel(value));
            }
        }
        let value = cel_context.resolve(&parsed);
        if let Some(reason) = meter.stopped() {
            return Err(format!("stopped: {reason}"));
        }
        value.map_err(|e| e.to_string())?.json().map_err(|e| e.to_string())
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
        assert_eq!(truth_now("review.verdict == 'pass' && input.n > 2", &context), Ok(true));
        assert_eq!(truth_now("input.strict", &context), Ok(true));
        assert_eq!(truth_now("review.verdict", &context), Ok(true));
        assert_eq!(truth_now("input.n - 3", &context), Ok(false));
        assert!(truth_now("missing.field", &context).is_err());
        assert!(truth_now("review.verdict < 3", &context).is_err());
    }

    fn truth_now(expression: &str, context: &Value) -> Result<bool, String> {
        truth(expression, context, None)
    }

    /// Six nested `all` over 14 elements: 7.5 million steps, refused after 100,000.
    const BOMB: &str = "l.all(a, l.all(b, l.all(c, l.all(d, l.all(e, l.all(f, a + b + c + d + e + f >= 0))))))";

    #[test]
    fn nested_comprehensions_stop_at_the_step_budget_even_when_an_error_would_be_absorbed() {
        let context = json!({ "l": (0..14).collect::<Vec<_>>() });
        let error = truth_now(BOMB, &context).unwrap_err();
        assert!(error.contains("more than 100000 steps"), "{error}");
        let absorbed = format!("{BOMB} || true");
        assert!(truth_now(&absorbed, &context).unwrap_err().contains("more than 100000 steps"));
        // Within the budget, nesting is fine: 14^4 steps.
        assert_eq!(truth_now("l.all(a, l.all(b, l.exists(c, l.map(d, d).size() == 14)))", &context), Ok(true));
        assert_eq!(truth_now("l.filter(x, x > 10).size() == 3", &context), Ok(true));
    }

    #[test]
    fn an_evaluation_stops_at_its_deadline() {
        let context = json!({ "l": (0..14).collect::<Vec<_>>() });
        let deadline = std::time::Instant::now();
        let error = truth("l.all(a, l.all(b, a + b >= 0))", &context, Some(deadline)).unwrap_err();
        assert!(error.contains("time ran out"), "{error}");
    }

    mod hostile {
        use proptest::prelude::*;
        use serde_json::json;

        use crate::hostile_input::{bounded, corpus_strings, mutated, survives_hostile_texts};

        fn evaluate(text: &str) {
            let context = json!({ "input": { "n": 3, "tags": ["a", "b"] }, "review": { "verdict": "pass" } });
            let _ = super::super::truth(text, &context, None);
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
