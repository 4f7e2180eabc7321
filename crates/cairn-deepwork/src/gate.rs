//! The quality gate `finished_step` runs before a step may advance.
//!
//! First, file outputs are validated against their argument's `json_schema` (files hold JSON or YAML); any failure is
//! the feedback. Then review tasks are collected: the step's own reviews (review blocks over all submitted files,
//! process requirements, reviews of string outputs; see `step_reviews`) and the project's rules (`.deepreview`,
//! DeepSchemas) over the submitted files that git sees as changed. Tasks whose review already passed for the same
//! contents are skipped; the rest are written to instruction files and listed in the feedback. The gate returns the
//! feedback to send back with `needs_work`, or `None` when the step may advance.

pub(crate) mod step_reviews;

use std::path::Path;

use indexmap::IndexMap;
use serde_json::Value;

use crate::changed_files::{changed_files, reference_root};
use crate::confined;
use crate::job::{ArgumentType, JobDefinition, Step, Workflow};
use crate::review::{build_tasks, format_tasks, root_relative, rule_matches_any, write_instruction_files};
use crate::review_rule::ReviewRule;
use cairn_yaml as yaml;

use step_reviews::step_reviews;

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

/// Runs the gate: `Some(feedback)` when the step needs more work. `project_rules` are the project's `.deepreview` and
/// DeepSchema rules; `platform` picks reviewer agents and the task format. Fails only when instruction files cannot
/// be written.
pub fn run(
    input: &GateInput<'_>,
    project_rules: &[ReviewRule],
    platform: &str,
    default_agent: &str,
) -> Result<Option<String>, String> {
    let errors = json_schema_errors(input);
    if !errors.is_empty() {
        let list: Vec<String> = errors.iter().map(|e| format!("- {e}")).collect();
        return Ok(Some(format!(
            "JSON schema validation failed:\n\n{}\n\nFix these issues and call finished_step again.",
            list.join("\n")
        )));
    }
    let own = step_reviews(input, platform);
    let files = submitted_files(input);
    let mut tasks = build_tasks(&own.rules, &files, input.root, platform, false);
    tasks.extend(own.inline_tasks);
    // Project rules only look at outputs this branch changed (a git failure means nothing changed). Asking git costs
    // several processes, so it is done only when some project rule could match a submitted file at all.
    if project_rules.iter().any(|rule| rule_matches_any(rule, &files, input.root)) {
        let changed = changed_files(input.root, None).unwrap_or_default();
        // In git's (sorted) order, as DeepWork lists them.
        let changed_outputs: Vec<String> = changed.into_iter().filter(|f| files.contains(f)).collect();
        tasks.extend(build_tasks(project_rules, &changed_outputs, input.root, platform, false));
    }
    if tasks.is_empty() {
        return Ok(None);
    }
    let pending = write_instruction_files(input.root, tasks)?;
    if pending.is_empty() {
        return Ok(None);
    }
    let list = format_tasks(&pending, platform, default_agent, input.root, &reference_root(input.root));
    Ok(Some(format!(
        "Quality reviews are required before this step can advance.\n\n{list}\n\n## How to Run Reviews\n\n\
         Launch each review task above as its own sub-agent, all in parallel. A task's prompt points at an instruction \
         file: the reviewer reads it and follows it.\n\n## After Reviews\n\nA reviewer records a passing review with \
         `mark_review_as_passed`. If you are sure a failing review's finding is wrong, you may mark that review as \
         passed yourself; otherwise fix what the reviews found. Then call `finished_step` again: reviews whose files \
         are unchanged since they passed are skipped."
    )))
}

/// The submitted file outputs, in step order, relative to the project root.
fn submitted_files(input: &GateInput<'_>) -> Vec<String> {
    let mut files = Vec::new();
    for name in input.step.outputs.keys() {
        let (Some(value), Some(argument)) = (input.outputs.get(name), input.job.argument(name)) else { continue };
        if argument.kind != ArgumentType::FilePath {
            continue;
        }
        for path in paths(value) {
            let relative = root_relative(input.root, path);
            if !files.contains(&relative) {
                files.push(relative);
            }
        }
    }
    files
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
            let Ok(text) = confined::read_text(&full, Some(input.root), None) else { continue };
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
