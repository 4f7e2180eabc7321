//! Run inputs checked against a workflow's `inputs` (§13.3): defaults applied, required ones present, types and
//! `enum`s respected. A workflow without an `inputs` block accepts any object.

use serde_json::{Map, Value};

use super::model::{InputType, Workflow};

/// The run input with defaults applied, or every problem in one message.
pub fn validate_inputs(workflow: &Workflow, given: Option<&Value>) -> Result<Value, String> {
    let given = match given {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => return Err("`input` must be an object of input name → value".into()),
    };
    let Some(declared) = &workflow.inputs else {
        return Ok(Value::Object(given));
    };
    let mut problems = Vec::new();
    let mut input = Map::new();
    for name in given.keys() {
        if !declared.iter().any(|d| &d.name == name) {
            let names: Vec<&str> = declared.iter().map(|d| d.name.as_str()).collect();
            problems.push(format!("unknown input '{name}' (declared: {})", names.join(", ")));
        }
    }
    for decl in declared {
        let value = match given.get(&decl.name).filter(|v| !v.is_null()) {
            Some(value) => value.clone(),
            None => match &decl.default {
                Some(default) => default.clone(),
                None if decl.required => {
                    problems.push(format!("input '{}' is required", decl.name));
                    continue;
                }
                None => continue,
            },
        };
        let ok = match decl.ty {
            InputType::String => value.is_string(),
            InputType::Number => value.is_number(),
            InputType::Integer => value.is_i64() || value.is_u64(),
            InputType::Boolean => value.is_boolean(),
            InputType::Object => value.is_object(),
            InputType::Array => value.is_array(),
        };
        if !ok {
            problems.push(format!(
                "input '{}' must be of type {}, got {value}",
                decl.name,
                serde_json::to_value(decl.ty).unwrap_or_default().as_str().unwrap_or_default()
            ));
            continue;
        }
        if let Some(allowed) = &decl.allowed
            && !allowed.contains(&value)
        {
            problems.push(format!("input '{}' must be one of {}", decl.name, Value::Array(allowed.clone())));
            continue;
        }
        input.insert(decl.name.clone(), value);
    }
    if problems.is_empty() { Ok(Value::Object(input)) } else { Err(problems.join("; ")) }
}
