//! Job definitions (job.yml): the model and its parser.
//!
//! Parsing runs in stages, each with its own error text (the texts DeepWork users know): the file is read, the YAML
//! parsed, the document validated against cairn's JSON Schema (`job.schema.json`, draft 7), then checked for
//! consistency (unique step names, arguments and workflows that exist, exactly one of `instructions` and
//! `sub_workflow`). Errors name the file and, where the problem is in the document, its line and column.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::Value;

use crate::confined::{self, MAX_DEFINITION_BYTES};
use cairn_yaml as yaml;

/// cairn's JSON Schema for job.yml, also written to `<project>/.deepwork/job.schema.json` for agents to read.
pub const JOB_SCHEMA: &str = include_str!("job.schema.json");

static VALIDATOR: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
    let schema: Value = serde_json::from_str(JOB_SCHEMA).expect("job.schema.json is valid JSON");
    jsonschema::draft7::new(&schema).expect("job.schema.json is a valid draft-7 schema")
});

/// A loaded job.
#[derive(Debug, Clone, Deserialize)]
pub struct JobDefinition {
    /// The `name:` field (jobs are looked up by directory name, reported by this name).
    pub name: String,
    /// One-line summary.
    pub summary: String,
    /// Arguments in document order.
    pub step_arguments: Vec<StepArgument>,
    /// Workflows in document order.
    pub workflows: IndexMap<String, Workflow>,
    /// The directory holding job.yml.
    #[serde(skip)]
    pub job_dir: PathBuf,
}

/// A value that steps read or produce.
#[derive(Debug, Clone, Deserialize)]
pub struct StepArgument {
    /// Argument name.
    pub name: String,
    /// What the value is.
    pub description: String,
    /// `string` or `file_path`.
    #[serde(rename = "type")]
    pub kind: ArgumentType,
    /// Review applied wherever this argument is an output.
    pub review: Option<ReviewBlock>,
    /// JSON Schema every file given for this argument must satisfy.
    pub json_schema: Option<Value>,
}

/// The two kinds of argument value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgumentType {
    /// A string value.
    String,
    /// One path or a list of paths, relative to the project root.
    FilePath,
}

impl ArgumentType {
    /// The name used in job.yml and in results.
    pub fn as_str(self) -> &'static str {
        match self {
            ArgumentType::String => "string",
            ArgumentType::FilePath => "file_path",
        }
    }
}

/// A review of a step's outputs.
#[derive(Debug, Clone, Deserialize)]
pub struct ReviewBlock {
    /// `individual` or `matches_together`.
    pub strategy: String,
    /// What the reviewer checks.
    pub instructions: String,
    /// Reviewer agent per platform.
    #[serde(default)]
    pub agent: IndexMap<String, String>,
    /// Extra context for the reviewer.
    #[serde(default)]
    pub additional_context: AdditionalContext,
}

/// Extra context a review asks for.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct AdditionalContext {
    /// List every changed file.
    #[serde(default)]
    pub all_changed_filenames: bool,
    /// List matching files that did not change.
    #[serde(default)]
    pub unchanged_matching_files: bool,
}

/// A workflow: an ordered list of steps.
#[derive(Debug, Clone, Deserialize)]
pub struct Workflow {
    /// Workflow name (its key in `workflows`).
    #[serde(skip)]
    pub name: String,
    /// One-line summary.
    pub summary: String,
    /// Steps in order.
    pub steps: Vec<Step>,
    /// Sub-agent type to run the workflow in.
    pub agent: Option<String>,
    /// Context given to every step.
    #[serde(rename = "common_job_info_provided_to_all_steps_at_runtime")]
    pub common_job_info: Option<String>,
    /// Returned when the workflow completes.
    pub post_workflow_instructions: Option<String>,
}

/// One step of a workflow.
#[derive(Debug, Clone, Deserialize)]
pub struct Step {
    /// Step id.
    pub name: String,
    /// What the agent does (markdown); absent for sub-workflow steps.
    pub instructions: Option<String>,
    /// The workflow this step delegates to.
    pub sub_workflow: Option<SubWorkflowRef>,
    /// Arguments read, in document order.
    #[serde(default)]
    pub inputs: IndexMap<String, InputRef>,
    /// Arguments produced, in document order.
    #[serde(default)]
    pub outputs: IndexMap<String, OutputRef>,
    /// Process requirements checked against the work summary.
    #[serde(default)]
    pub process_requirements: IndexMap<String, String>,
}

/// A reference to another workflow.
#[derive(Debug, Clone, Deserialize)]
pub struct SubWorkflowRef {
    /// Workflow name.
    pub workflow_name: String,
    /// Job of the workflow (the current job when absent).
    pub workflow_job: Option<String>,
}

/// A step's use of an argument as input.
#[derive(Debug, Clone, Deserialize)]
pub struct InputRef {
    /// Whether the input must be available.
    #[serde(default = "yes")]
    pub required: bool,
}

/// A step's use of an argument as output.
#[derive(Debug, Clone, Deserialize)]
pub struct OutputRef {
    /// Whether `finished_step` must receive it.
    #[serde(default = "yes")]
    pub required: bool,
    /// Review of this output (in addition to the argument's).
    pub review: Option<ReviewBlock>,
}

fn yes() -> bool {
    true
}

impl JobDefinition {
    /// The argument named `name`.
    pub fn argument(&self, name: &str) -> Option<&StepArgument> {
        self.step_arguments.iter().find(|a| a.name == name)
    }

    /// The workflow named `name`; when there is no such workflow but the job has exactly one, that one.
    pub fn select_workflow(&self, name: &str) -> Result<&Workflow, String> {
        if let Some(workflow) = self.workflows.get(name) {
            return Ok(workflow);
        }
        if self.workflows.len() == 1 {
            return Ok(&self.workflows[0]);
        }
        let names: Vec<&str> = self.workflows.keys().map(String::as_str).collect();
        Err(format!(
            "Workflow '{name}' not found in job '{}'. Available workflows: {}",
            self.name,
            names.join(", ")
        ))
    }
}

impl Workflow {
    /// Index of the step `id`.
    pub fn step_index(&self, id: &str) -> Option<usize> {
        self.steps.iter().position(|s| s.name == id)
    }
}

/// Loads `<job_dir>/job.yml`, which must resolve inside `boundary` when given (see `confined`). A job.yml that
/// is not a regular file, or is larger than [`MAX_DEFINITION_BYTES`], is refused without being read.
pub fn load_job(job_dir: &Path, boundary: Option<&Path>) -> Result<JobDefinition, String> {
    if !job_dir.exists() {
        return Err(format!("Job directory does not exist: {}", job_dir.display()));
    }
    if !job_dir.is_dir() {
        return Err(format!("Job path is not a directory: {}", job_dir.display()));
    }
    let path = job_dir.join("job.yml");
    if std::fs::symlink_metadata(&path).is_err() {
        return Err(format!("job.yml not found in {}", job_dir.display()));
    }
    let text = confined::read_text(&path, boundary, Some(MAX_DEFINITION_BYTES))
        .map_err(|err| format!("Failed to load job.yml: Failed to read YAML file {}: {err}", path.display()))?;
    parse_job(&text, job_dir)
}

/// Parses job.yml text for a job living in `job_dir`.
pub fn parse_job(text: &str, job_dir: &Path) -> Result<JobDefinition, String> {
    let path = job_dir.join("job.yml");
    let doc = yaml::parse(text)
        .map_err(|err| format!("Failed to load job.yml: Failed to parse YAML file {}: {err}", path.display()))?;
    match &doc.value {
        Value::Null => return Err("job.yml is empty".into()),
        Value::Object(map) if map.is_empty() => return Err("job.yml is empty".into()),
        Value::Object(_) => {}
        other => {
            return Err(format!(
                "Failed to load job.yml: YAML file must contain a dictionary, got {}",
                python_type_name(other)
            ));
        }
    }
    if let Some(message) = schema_error(&doc, &path) {
        return Err(format!("Job definition validation failed: {message}"));
    }
    let mut job: JobDefinition = serde_json::from_value(doc.value)
        .map_err(|err| format!("Job definition validation failed: {err} ({})", path.display()))?;
    for (name, workflow) in job.workflows.iter_mut() {
        workflow.name = name.clone();
    }
    job.job_dir = job_dir.to_path_buf();
    check_consistency(&job)?;
    Ok(job)
}

/// The most relevant schema violation (the one nearest the top of the document), with its location.
fn schema_error(doc: &yaml::Document, path: &Path) -> Option<String> {
    let error = VALIDATOR.iter_errors(&doc.value).min_by_key(|e| e.instance_path().iter().count())?;
    let pointer = error.instance_path().as_str().to_owned();
    let segments: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    let at = if segments.is_empty() { "root".to_owned() } else { segments.join(" -> ") };
    let location = match doc.position(&pointer) {
        Some((line, column)) => format!(" ({}:{line}:{column})", path.display()),
        None => format!(" ({})", path.display()),
    };
    Some(format!("Validation error at {at}: {error}{location}"))
}

fn check_consistency(job: &JobDefinition) -> Result<(), String> {
    for (wf_name, workflow) in &job.workflows {
        let mut seen = std::collections::HashSet::new();
        for step in &workflow.steps {
            if !seen.insert(step.name.as_str()) {
                return Err(format!("Workflow '{wf_name}' has duplicate step name '{}'", step.name));
            }
        }
        for step in &workflow.steps {
            for (refs, what) in [(step.inputs.keys().collect::<Vec<_>>(), "inputs"), (step.outputs.keys().collect(), "outputs")] {
                if let Some(missing) = refs.into_iter().find(|name| job.argument(name).is_none()) {
                    return Err(format!(
                        "Workflow '{wf_name}' step '{}' references non-existent step_argument '{missing}' in {what}",
                        step.name
                    ));
                }
            }
            if let Some(sub) = &step.sub_workflow
                && sub.workflow_job.is_none()
                && !job.workflows.contains_key(&sub.workflow_name)
            {
                return Err(format!(
                    "Workflow '{wf_name}' step '{}' references non-existent workflow '{}'",
                    step.name, sub.workflow_name
                ));
            }
            match (&step.instructions, &step.sub_workflow) {
                (Some(_), Some(_)) => {
                    return Err(format!(
                        "Workflow '{wf_name}' step '{}' has both 'instructions' and 'sub_workflow' — must have exactly one",
                        step.name
                    ));
                }
                (None, None) => {
                    return Err(format!(
                        "Workflow '{wf_name}' step '{}' has neither 'instructions' nor 'sub_workflow' — must have exactly one",
                        step.name
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The name Python gives a value's type, as DeepWork's messages use it.
fn python_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<JobDefinition, String> {
        parse_job(text, Path::new("/p/.deepwork/jobs/j"))
    }

    const VALID: &str = "name: j\nsummary: A job\nstep_arguments:\n  - {name: a, description: A, type: string}\n\
        workflows:\n  w:\n    summary: W\n    steps:\n      - name: one\n        instructions: Do it\n        outputs: {a: {}}\n";

    #[test]
    fn parses_a_valid_job() {
        let job = check(VALID).unwrap();
        assert_eq!(job.name, "j");
        assert_eq!(job.workflows["w"].name, "w");
        assert!(job.workflows["w"].steps[0].outputs["a"].required);
    }

    #[test]
    fn reports_each_stage() {
        assert_eq!(check("").unwrap_err(), "job.yml is empty");
        assert_eq!(
            check("- a\n").unwrap_err(),
            "Failed to load job.yml: YAML file must contain a dictionary, got list"
        );
        assert!(check("a: [\n").unwrap_err().starts_with("Failed to load job.yml: Failed to parse YAML file /p/.deepwork/jobs/j/job.yml: "));
        let err = check(&VALID.replace("summary: W", "summary: W\n    bogus_key: 1")).unwrap_err();
        assert!(err.starts_with("Job definition validation failed: Validation error at workflows -> w: "), "{err}");
        assert!(err.contains("bogus_key") && err.contains("job.yml:7:5"), "{err}");
        let err = check(&VALID.replace("instructions: Do it", "instructions: Do it\n        sub_workflow: {workflow_name: w}")).unwrap_err();
        assert_eq!(err, "Workflow 'w' step 'one' has both 'instructions' and 'sub_workflow' — must have exactly one");
        let err = check(&VALID.replace("outputs: {a: {}}", "outputs: {b: {}}")).unwrap_err();
        assert_eq!(err, "Workflow 'w' step 'one' references non-existent step_argument 'b' in outputs");
    }

    #[test]
    fn selects_the_only_workflow_when_the_name_is_wrong() {
        let job = check(VALID).unwrap();
        assert_eq!(job.select_workflow("nope").unwrap().name, "w");
    }
}
