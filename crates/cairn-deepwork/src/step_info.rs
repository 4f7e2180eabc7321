//! What an agent is told about a step: `ActiveStepInfo` with its expected outputs, resolved inputs and instructions.
//!
//! Input values come from the `inputs` given to `start_workflow` (first step only) and from the outputs of earlier
//! steps of the same workflow instance; a missing value is shown as *not yet available* (inputs marked required are
//! not enforced, as in DeepWork).

use std::path::Path;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use crate::host_names::HostNames;
use crate::job::{ArgumentType, JobDefinition, Step, Workflow};

/// Everything the agent needs to work on a step (field order is the wire order).
#[derive(Debug, Clone, Serialize)]
pub struct ActiveStepInfo {
    /// Session to pass to every later call.
    pub session_id: String,
    /// The step's id.
    pub step_id: String,
    /// Absolute project root.
    pub project_root: String,
    /// Absolute job directory.
    pub job_dir: String,
    /// What `finished_step` expects.
    pub step_expected_outputs: Vec<ExpectedOutput>,
    /// The step's inputs and their values.
    pub step_inputs: Vec<StepInputInfo>,
    /// The instructions, with an inputs section first.
    pub step_instructions: String,
    /// Context shared by all steps of the workflow.
    pub common_job_info: String,
}

/// One output `finished_step` expects.
#[derive(Debug, Clone, Serialize)]
pub struct ExpectedOutput {
    /// Key to use in `outputs`.
    pub name: String,
    /// `file_path` or `string`.
    #[serde(rename = "type")]
    pub kind: String,
    /// What it should contain.
    pub description: String,
    /// Whether it may be omitted.
    pub required: bool,
    /// How to write the value.
    pub syntax_for_finished_step_tool: String,
}

/// One input of the step.
#[derive(Debug, Clone, Serialize)]
pub struct StepInputInfo {
    /// Argument name.
    pub name: String,
    /// `file_path` or `string`.
    #[serde(rename = "type")]
    pub kind: String,
    /// What it is.
    pub description: String,
    /// Its value, if available.
    pub value: Option<Value>,
    /// Whether the step declares it required.
    pub required: bool,
}

/// Values for `step`'s declared inputs: from `provided` (start inputs), else from `available` (earlier outputs),
/// else from `previous` (what the step had before, so going back to a step keeps the values it started with).
pub fn resolve_inputs(
    step: &Step,
    provided: Option<&IndexMap<String, Value>>,
    available: &IndexMap<String, Value>,
    previous: &IndexMap<String, Value>,
) -> IndexMap<String, Value> {
    let mut values = IndexMap::new();
    for name in step.inputs.keys() {
        let value = provided
            .and_then(|p| p.get(name))
            .or_else(|| available.get(name))
            .or_else(|| previous.get(name));
        if let Some(value) = value {
            values.insert(name.clone(), value.clone());
        }
    }
    values
}

/// Builds the information for `step` with its resolved `input_values`.
pub fn active_step_info(
    session_id: &str,
    root: &Path,
    job: &JobDefinition,
    workflow: &Workflow,
    step: &Step,
    input_values: &IndexMap<String, Value>,
) -> ActiveStepInfo {
    let step_expected_outputs = step
        .outputs
        .iter()
        .filter_map(|(name, output)| {
            let argument = job.argument(name)?;
            Some(ExpectedOutput {
                name: name.clone(),
                kind: argument.kind.as_str().to_owned(),
                description: argument.description.clone(),
                required: output.required,
                syntax_for_finished_step_tool: match argument.kind {
                    ArgumentType::FilePath => "filepath or list of filepaths",
                    ArgumentType::String => "string value",
                }
                .to_owned(),
            })
        })
        .collect();
    let step_inputs = step
        .inputs
        .iter()
        .filter_map(|(name, input)| {
            let argument = job.argument(name)?;
            Some(StepInputInfo {
                name: name.clone(),
                kind: argument.kind.as_str().to_owned(),
                description: argument.description.clone(),
                value: input_values.get(name).cloned(),
                required: input.required,
            })
        })
        .collect();
    ActiveStepInfo {
        session_id: session_id.to_owned(),
        step_id: step.name.clone(),
        project_root: root.display().to_string(),
        job_dir: job.job_dir.display().to_string(),
        step_expected_outputs,
        step_inputs,
        step_instructions: step_instructions(job, step, input_values),
        common_job_info: workflow.common_job_info.clone().unwrap_or_default(),
    }
}

/// The step's instructions, preceded by a `## Inputs` section when it declares inputs.
fn step_instructions(job: &JobDefinition, step: &Step, input_values: &IndexMap<String, Value>) -> String {
    let mut lines: Vec<String> = Vec::new();
    if !step.inputs.is_empty() {
        lines.push("## Inputs\n".to_owned());
        for (name, input) in &step.inputs {
            let Some(argument) = job.argument(name) else { continue };
            let need = if input.required { "required" } else { "optional" };
            let shown = match (input_values.get(name), argument.kind) {
                (None, _) => format!("{} — *not yet available*", argument.description),
                (Some(Value::Array(items)), ArgumentType::FilePath) => items
                    .iter()
                    .map(|i| format!("`{}`", i.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(", "),
                (Some(Value::String(path)), ArgumentType::FilePath) => format!("`{path}`"),
                (Some(Value::String(text)), ArgumentType::String) => text.clone(),
                (Some(other), _) => other.to_string(),
            };
            lines.push(format!("- **{name}** ({need}): {shown}"));
        }
        lines.push(String::new());
    }
    match (&step.sub_workflow, &step.instructions) {
        (Some(sub), _) => lines.push(format!(
            "This step delegates to a sub-workflow. Call `start_workflow` with job_name=\"{}\" and \
             workflow_name=\"{}\", then follow the instructions it returns until the sub-workflow completes.",
            sub.workflow_job.as_deref().unwrap_or(&job.name),
            sub.workflow_name
        )),
        (None, Some(instructions)) => lines.push(instructions.clone()),
        (None, None) => {}
    }
    lines.join("\n")
}

/// How to start a workflow, as `get_workflows` tells it, naming the tool as the host shows it.
pub fn how_to_invoke(job: &str, workflow: &Workflow, names: &HostNames) -> String {
    let start = names.tool("start_workflow");
    match &workflow.agent {
        Some(agent) => format!(
            "Invoke as an Agent using subagent_type=\"{agent}\" with a prompt giving full context needed and \
             instructions to call `{start}` (job_name=\"{job}\", workflow_name=\"{}\"). If you do not have Agent as \
             an available tool, invoke the workflow directly.",
            workflow.name
        ),
        None => format!(
            "Call `{start}` with job_name=\"{job}\" and workflow_name=\"{}\", then follow the step instructions it \
             returns.",
            workflow.name
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::parse_job;

    fn job() -> JobDefinition {
        let text = "name: j\nsummary: S\nstep_arguments:\n  - {name: topic, description: The topic, type: string}\n\
            \x20 - {name: notes, description: Notes file, type: file_path}\nworkflows:\n  w:\n    summary: W\n    steps:\n\
            \x20     - {name: a, instructions: \"Do A\", inputs: {topic: {}}, outputs: {notes: {}}}\n\
            \x20     - {name: b, instructions: \"Do B\", inputs: {notes: {}, topic: {required: false}}}\n";
        parse_job(text, Path::new("/jobs/j")).unwrap()
    }

    #[test]
    fn instructions_list_inputs_then_the_text() {
        let job = job();
        let wf = &job.workflows["w"];
        let values = IndexMap::from([("notes".to_owned(), Value::from(vec!["a.md", "b.md"]))]);
        let info = active_step_info("s", Path::new("/p"), &job, wf, &wf.steps[1], &values);
        assert_eq!(
            info.step_instructions,
            "## Inputs\n\n- **notes** (required): `a.md`, `b.md`\n- **topic** (optional): The topic — *not yet available*\n\nDo B"
        );
        assert_eq!(info.step_inputs[0].value, Some(Value::from(vec!["a.md", "b.md"])));
        let first = active_step_info("s", Path::new("/p"), &job, wf, &wf.steps[0], &IndexMap::new());
        assert_eq!(first.step_expected_outputs[0].syntax_for_finished_step_tool, "filepath or list of filepaths");
    }

    #[test]
    fn inputs_prefer_provided_then_outputs_then_previous() {
        let job = job();
        let step = &job.workflows["w"].steps[0];
        let old = IndexMap::from([("topic".to_owned(), Value::from("old"))]);
        assert_eq!(resolve_inputs(step, None, &IndexMap::new(), &old)["topic"], "old");
        let given = IndexMap::from([("topic".to_owned(), Value::from("new")), ("junk".to_owned(), Value::from("x"))]);
        let resolved = resolve_inputs(step, Some(&given), &IndexMap::new(), &old);
        assert_eq!(resolved.len(), 1);
        assert_eq!(resolved["topic"], "new");
    }
}
