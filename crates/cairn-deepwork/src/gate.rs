//! The quality gate `finished_step` runs before a step may advance.
//!
//! Today it validates file outputs against their argument's `json_schema` (files hold JSON or YAML). Review tasks
//! (review blocks, process requirements, `.deepreview` rules, DeepSchemas) plug in here as further checks of the same
//! [`GateInput`]. The gate returns the feedback to send back with `needs_work`, or `None` when the step may advance.

use std::path::Path;

use indexmap::IndexMap;
use serde_json::Value;

use crate::job::{ArgumentType, JobDefinition, Step, Workflow};
use crate::yaml;

/// What the gate looks at.
#[derive(Debug)]
pub struct GateInput<'a> {
    /// Project root.
    pub root: &'a Path,
    /// The job.
    pub job: &'a JobDefinition,
    /// The workflow.
    pub workflow: &'a Workflow,
    /// The step being finished.
    pub step: &'a Step,
    /// Outputs as submitted (already checked for names, presence and types).
    pub outputs: &'a IndexMap<String, Value>,
    /// The step's resolved inputs.
    pub input_values: &'a IndexMap<String, Value>,
    /// The agent's summary of its work.
    pub work_summary: Option<&'a str>,
}

/// Runs the gate: `Some(feedback)` when the step needs more work.
pub fn run(input: &GateInput<'_>) -> Option<String> {
    let errors = json_schema_errors(input);
    if errors.is_empty() {
        return None;
    }
    let list: Vec<String> = errors.iter().map(|e| format!("- {e}")).collect();
    Some(format!(
        "JSON schema validation failed:\n\n{}\n\nFix these issues and call finished_step again.",
        list.join("\n")
    ))
}

/// Every file output whose argument has a `json_schema` is parsed (JSON or YAML) and validated.
fn json_schema_errors(input: &GateInput<'_>) -> Vec<String> {
    let mut errors = Vec::new();
    for (name, value) in input.outputs {
        let Some(argument) = input.job.argument(name) else { continue };
        let (ArgumentType::FilePath, Some(schema)) = (argument.kind, &argument.json_schema) else { continue };
        let validator = match jsonschema::validator_for(schema) {
            Ok(v) => v,
            Err(err) => {
                errors.push(format!("Output '{name}': the json_schema in job.yml is not a valid schema: {err}"));
                continue;
            }
        };
        for path in paths(value) {
            let full = input.root.join(path);
            let Ok(text) = std::fs::read_to_string(&full) else { continue };
            match yaml::parse(&text) {
                Err(err) => errors.push(format!("Output '{name}' file '{path}': failed to parse: {err}")),
                Ok(doc) => {
                    if let Some(err) = validator.iter_errors(&doc.value).next() {
                        let at: Vec<String> = err.instance_path().iter().map(|s| segment(&s)).collect();
                        let at = if at.is_empty() { "root".to_owned() } else { at.join(" -> ") };
                        errors.push(format!(
                            "Output '{name}' file '{path}': JSON schema validation failed: Validation error at {at}: {err}"
                        ));
                    }
                }
            }
        }
    }
    errors
}

fn segment(s: &jsonschema::paths::LocationSegment<'_>) -> String {
    match s {
        jsonschema::paths::LocationSegment::Property(p) => p.to_string(),
        jsonschema::paths::LocationSegment::Index(i) => i.to_string(),
    }
}

/// The path or paths of a file output value.
pub(crate) fn paths(value: &Value) -> Vec<&str> {
    match value {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}
