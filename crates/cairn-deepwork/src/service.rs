//! The deepwork facade: every operation the MCP tools (and the CLI) perform, as plain Rust.
//!
//! Each operation takes the project root it runs against (resolved by the caller per call) and a command, and returns
//! a result whose field order is the wire order. Operations that change a session hold the session's lock from the
//! first read to the last write, and validate everything before changing anything: a failed call leaves state as it
//! was.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use crate::deepreview::DeepreviewCache;
use crate::deepschema::DeepschemaCache;
use crate::discovery::{JobCache, LoadError, find_job_dir, holds_job_file, job_folders, load_all};
use crate::confined::{self, MAX_DEFINITION_BYTES};
use crate::gate::{self, GateInput};
use crate::ids::{check_path_id, is_job_name};
use crate::job::{ArgumentType, JOB_SCHEMA, JobDefinition, parse_job};
use crate::server_text;
use crate::session::{StackFile, WorkflowSession};
use crate::session_store::{Durability, SessionStore, read_stack, write_atomic};
use crate::status::StatusWriter;
use crate::step_info::{ActiveStepInfo, active_step_info, how_to_invoke, resolve_inputs};

/// Why an operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The call failed; the agent sees `Error calling tool '<tool>': <message>`.
    #[error("{0}")]
    Failed(String),
    /// Reported as an ordinary result `{"error": message}`, as DeepWork does for these cases.
    #[error("{0}")]
    Soft(String),
}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Self {
        Error::Failed(format!("File system error: {err}"))
    }
}

/// Result of an operation.
pub type Result<T> = std::result::Result<T, Error>;

/// How the server was started.
#[derive(Debug, Clone)]
pub struct Config {
    /// Platform name (`claude` unless `--platform` says otherwise); sessions are kept per platform.
    pub platform: String,
    /// Folder of cairn's standard jobs.
    pub standard_jobs: PathBuf,
    /// Extra job folders (`DEEPWORK_ADDITIONAL_JOBS_FOLDERS`).
    pub additional_job_folders: Vec<PathBuf>,
    /// Folder of cairn's standard DeepSchemas.
    pub standard_schemas: PathBuf,
    /// Extra named-schema folders (`DEEPWORK_ADDITIONAL_SCHEMAS_FOLDERS`).
    pub additional_schema_folders: Vec<PathBuf>,
}

/// The deepwork service. Cheap to clone; holds no workflow state (that lives in files).
#[derive(Debug, Clone)]
pub struct Deepwork {
    config: Arc<Config>,
    cache: Arc<JobCache>,
    deepreviews: Arc<DeepreviewCache>,
    deepschemas: Arc<DeepschemaCache>,
    prepared_roots: Arc<Mutex<HashSet<PathBuf>>>,
    /// Per root, the jobs the job manifest was last written from (by identity: the cache hands out the same `Arc`
    /// until a job.yml changes), so an unchanged manifest is not rewritten.
    manifests: Arc<Mutex<HashMap<PathBuf, Vec<Arc<JobDefinition>>>>>,
}

/// `get_workflows` result.
#[derive(Debug, Serialize)]
pub struct WorkflowList {
    /// Jobs that load.
    pub jobs: Vec<JobInfo>,
    /// Jobs that don't.
    pub errors: Vec<JobLoadErrorInfo>,
}

/// A job as listed.
#[derive(Debug, Serialize)]
pub struct JobInfo {
    /// Job name.
    pub name: String,
    /// Summary.
    pub summary: String,
    /// Workflows in document order.
    pub workflows: Vec<WorkflowInfo>,
}

/// A workflow as listed.
#[derive(Debug, Serialize)]
pub struct WorkflowInfo {
    /// Workflow name.
    pub name: String,
    /// Summary.
    pub summary: String,
    /// How to start it.
    pub how_to_invoke: String,
}

/// A job that failed to load.
#[derive(Debug, Serialize)]
pub struct JobLoadErrorInfo {
    /// Directory name.
    pub job_name: String,
    /// Directory path.
    pub job_dir: String,
    /// Error and suggestion.
    pub error: String,
}

/// One entry of a stack as results show it.
#[derive(Debug, Clone, Serialize)]
pub struct StackEntry {
    /// `job/workflow`.
    pub workflow: String,
    /// Current step.
    pub step: String,
}

/// `start_workflow` arguments.
#[derive(Debug, Clone, Default)]
pub struct StartWorkflow {
    /// What the user wants.
    pub goal: String,
    /// Job (directory) name.
    pub job_name: String,
    /// Workflow name.
    pub workflow_name: String,
    /// Session id (generated on platforms other than `claude` when absent).
    pub session_id: Option<String>,
    /// Values for the first step's inputs.
    pub inputs: Option<IndexMap<String, Value>>,
    /// Sub-agent whose stack to use.
    pub agent_id: Option<String>,
}

/// `start_workflow` result.
#[derive(Debug, Serialize)]
pub struct WorkflowStarted {
    /// A reminder to clarify ambiguous requests.
    pub important_note: String,
    /// The first step.
    pub begin_step: ActiveStepInfo,
    /// The stack afterwards.
    pub stack: Vec<StackEntry>,
}

/// `finished_step` arguments.
#[derive(Debug, Clone, Default)]
pub struct FinishStep {
    /// Outputs by argument name.
    pub outputs: IndexMap<String, Value>,
    /// Summary of the work.
    pub work_summary: Option<String>,
    /// Reason to skip the quality gate.
    pub quality_review_override_reason: Option<String>,
    /// Session id.
    pub session_id: Option<String>,
    /// Sub-agent.
    pub agent_id: Option<String>,
}

/// `finished_step` result.
#[derive(Debug, Serialize)]
pub struct StepFinished {
    /// `needs_work`, `next_step` or `workflow_complete`.
    pub status: &'static str,
    /// Quality feedback (needs_work).
    pub feedback: Option<String>,
    /// The next step (next_step).
    pub begin_step: Option<ActiveStepInfo>,
    /// Completion message (workflow_complete).
    pub summary: Option<String>,
    /// Every output of the workflow (workflow_complete).
    pub all_outputs: Option<IndexMap<String, Value>>,
    /// What to do now (workflow_complete).
    pub post_workflow_instructions: Option<String>,
    /// The stack afterwards.
    pub stack: Vec<StackEntry>,
}

/// `abort_workflow` result.
#[derive(Debug, Serialize)]
pub struct WorkflowAborted {
    /// `job/workflow` aborted.
    pub aborted_workflow: String,
    /// Its step at the time.
    pub aborted_step: String,
    /// The reason given.
    pub explanation: String,
    /// The stack afterwards.
    pub stack: Vec<StackEntry>,
    /// The workflow now active.
    pub resumed_workflow: Option<String>,
    /// Its step.
    pub resumed_step: Option<String>,
}

/// `go_to_step` result.
#[derive(Debug, Serialize)]
pub struct WentToStep {
    /// The step to work on.
    pub begin_step: ActiveStepInfo,
    /// Steps whose progress was cleared.
    pub invalidated_steps: Vec<String>,
    /// The stack afterwards.
    pub stack: Vec<StackEntry>,
}

/// `register_session_job` result.
#[derive(Debug, Serialize)]
pub struct SessionJobRegistered {
    /// Always `registered`.
    pub status: &'static str,
    /// Job name.
    pub job_name: String,
    /// Where the job lives.
    pub job_dir: String,
    /// Confirmation.
    pub message: String,
}

/// `get_session_job` result.
#[derive(Debug, Serialize)]
pub struct SessionJob {
    /// Job name.
    pub job_name: String,
    /// The job.yml text as registered.
    pub job_definition_yaml: String,
}

const IMPORTANT_NOTE: &str = "IMPORTANT: If, given the info on the workflow you now have, the user's request seems \
    ambiguous and can be interpreted several ways, you MUST use AskUserQuestion to clarify their intent if that tool is \
    available.";
const SESSION_REQUIRED: &str = "session_id is required. Pass CLAUDE_CODE_SESSION_ID on Claude Code, or the session_id \
    returned by start_workflow on other platforms.";
const SESSION_REQUIRED_FOR_JOBS: &str = "session_id is required. Pass CLAUDE_CODE_SESSION_ID on Claude Code.";
const NO_SESSION_TO_FINISH: &str = "No active workflow session. Provide the session_id from the start_workflow \
    response (begin_step.session_id). If you want to resume a workflow, just start it again and call finished_step \
    with quality_review_override_reason until you get back to your prior step.";
const NO_SESSION: &str = "No active workflow session. Use start_workflow to begin a workflow.";
const GITIGNORE: &str = "# Ignore everything in this directory\n*\n# But keep this .gitignore\n!.gitignore\n";

/// A session's stacks, loaded under its lock.
struct Stacks {
    store: SessionStore,
    session_id: String,
    agent_id: Option<String>,
    main: StackFile,
    agent: Option<StackFile>,
}

impl Stacks {
    fn load(store: SessionStore, session_id: &str, agent_id: Option<&str>) -> Result<Self> {
        let main = store.read(session_id, None).map_err(Error::Failed)?;
        let agent = match agent_id {
            Some(agent) => Some(store.read(session_id, Some(agent)).map_err(Error::Failed)?),
            None => None,
        };
        Ok(Stacks { store, session_id: session_id.to_owned(), agent_id: agent_id.map(str::to_owned), main, agent })
    }

    /// The stack this call operates on.
    fn own(&mut self) -> &mut StackFile {
        self.agent.as_mut().unwrap_or(&mut self.main)
    }

    fn save_own(&self) -> Result<()> {
        let file = self.agent.as_ref().unwrap_or(&self.main);
        self.store.write(&self.session_id, self.agent_id.as_deref(), file)?;
        Ok(())
    }

    fn save_main(&self) -> Result<()> {
        self.store.write(&self.session_id, None, &self.main)?;
        Ok(())
    }

    /// The stack as results show it: the main stack, then this agent's.
    fn entries(&self) -> Vec<StackEntry> {
        let agent = self.agent.iter().flat_map(|a| a.workflow_stack.iter());
        self.main
            .workflow_stack
            .iter()
            .chain(agent)
            .map(|w| StackEntry { workflow: w.label(), step: w.current_step_id.clone() })
            .collect()
    }
}

impl Deepwork {
    /// A service with the given configuration.
    pub fn new(config: Config) -> Self {
        Deepwork {
            config: Arc::new(config),
            cache: Arc::new(JobCache::default()),
            deepreviews: Arc::new(DeepreviewCache::default()),
            deepschemas: Arc::new(DeepschemaCache::default()),
            prepared_roots: Arc::new(Mutex::new(HashSet::new())),
            manifests: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Parsed `.deepreview` files.
    pub(crate) fn deepreview_cache(&self) -> &DeepreviewCache {
        &self.deepreviews
    }

    /// Parsed DeepSchemas.
    pub(crate) fn deepschema_cache(&self) -> &DeepschemaCache {
        &self.deepschemas
    }

    /// Creates `.deepwork/tmp` (with its `.gitignore`) and `.deepwork/job.schema.json` under `root` once per process.
    pub fn prepare_project(&self, root: &Path) {
        if !self.prepared_roots.lock().expect("prepared roots lock").insert(root.to_path_buf()) {
            return;
        }
        prepare_tmp_dir(root);
        let schema = root.join(".deepwork").join("job.schema.json");
        if confined::read_text(&schema, Some(root), Some(MAX_DEFINITION_BYTES)).ok().as_deref() != Some(JOB_SCHEMA)
            && let Err(err) = write_atomic(&schema, JOB_SCHEMA.as_bytes(), Durability::Replaced)
        {
            tracing::warn!("could not write {}: {err}", schema.display());
        }
    }

    fn folders(&self, root: &Path) -> Vec<PathBuf> {
        job_folders(root, &self.config.standard_jobs, &self.config.additional_job_folders)
    }

    /// All jobs under `root`, and the ones that fail to load.
    pub fn load_jobs(&self, root: &Path) -> (Vec<Arc<JobDefinition>>, Vec<LoadError>) {
        load_all(&self.cache, &self.folders(root), root)
    }

    /// The `issue_detected` text for `root`, when some job fails to load.
    pub fn issue_detected(&self, root: &Path) -> Option<String> {
        server_text::issue_detected(&self.load_jobs(root).1)
    }

    /// The server instructions for a client working in `root`.
    pub fn server_instructions(&self, root: &Path) -> String {
        let (jobs, errors) = self.load_jobs(root);
        server_text::server_instructions(&jobs, &errors)
    }

    /// Lists jobs and workflows, and refreshes the job manifest status file.
    pub fn get_workflows(&self, root: &Path) -> WorkflowList {
        let (jobs, errors) = self.load_jobs(root);
        self.refresh_manifest(root, &jobs);
        WorkflowList {
            jobs: jobs
                .iter()
                .map(|job| JobInfo {
                    name: job.name.clone(),
                    summary: job.summary.clone(),
                    workflows: job
                        .workflows
                        .values()
                        .map(|wf| WorkflowInfo {
                            name: wf.name.clone(),
                            summary: wf.summary.clone(),
                            how_to_invoke: how_to_invoke(&job.name, wf),
                        })
                        .collect(),
                })
                .collect(),
            errors: errors
                .iter()
                .map(|e| JobLoadErrorInfo {
                    job_name: e.job_name.clone(),
                    job_dir: e.job_dir.display().to_string(),
                    error: server_text::error_with_suggestion(e),
                })
                .collect(),
        }
    }

    /// Rewrites the job manifest status file unless it was written from these very jobs and still exists.
    fn refresh_manifest(&self, root: &Path, jobs: &[Arc<JobDefinition>]) {
        let writer = StatusWriter::new(root);
        let mut manifests = self.manifests.lock().expect("manifest lock");
        let unchanged = manifests.get(root).is_some_and(|last| {
            last.len() == jobs.len() && last.iter().zip(jobs).all(|(a, b)| Arc::ptr_eq(a, b))
        });
        if unchanged && writer.manifest_path().exists() {
            return;
        }
        writer.write_manifest(jobs);
        manifests.insert(root.to_path_buf(), jobs.to_vec());
    }

    /// Finds and loads a job: the session's own job of that name first, then the job folders.
    pub(crate) fn find_job(&self, root: &Path, store: &SessionStore, session_id: Option<&str>, name: &str) -> Result<Arc<JobDefinition>> {
        if let Some(sid) = session_id {
            let dir = store.session_job_dir(sid, name);
            if holds_job_file(&dir) {
                return match &*self.cache.load(&dir, root) {
                    Ok(job) => Ok(job.clone()),
                    Err(err) => Err(Error::Failed(format!("Failed to parse session job '{name}': {err}"))),
                };
            }
        }
        let Some(dir) = find_job_dir(&self.folders(root), name) else {
            return Err(Error::Failed(format!("Job not found: {name}")));
        };
        match &*self.cache.load(&dir, root) {
            Ok(job) => Ok(job.clone()),
            Err(err) => Err(Error::Failed(format!("Failed to parse job '{name}': {err}"))),
        }
    }

    fn write_session_status(&self, root: &Path, store: &SessionStore, session_id: &str) {
        let folders = self.folders(root);
        let lookup = |name: &str| -> Option<Arc<JobDefinition>> {
            let dir = find_job_dir(&folders, name)?;
            (*self.cache.load(&dir, root)).as_ref().ok().cloned()
        };
        StatusWriter::new(root).write_session(store, session_id, &lookup);
    }

    /// Starts a workflow on top of the (session, agent) stack.
    pub fn start_workflow(&self, root: &Path, cmd: StartWorkflow) -> Result<WorkflowStarted> {
        let store = SessionStore::new(root, &self.config.platform);
        let given_session = cmd.session_id.as_deref().filter(|s| !s.is_empty());
        if let Some(sid) = given_session {
            check_path_id("session_id", sid).map_err(Error::Failed)?;
        }
        if let Some(agent) = &cmd.agent_id {
            check_path_id("agent_id", agent).map_err(Error::Failed)?;
        }
        let job = self.find_job(root, &store, given_session, &cmd.job_name)?;
        let workflow = job.select_workflow(&cmd.workflow_name).map_err(Error::Failed)?;
        let Some(first) = workflow.steps.first() else {
            return Err(Error::Failed(format!("Workflow '{}' has no steps", workflow.name)));
        };
        let session_id = match given_session {
            Some(sid) => sid.to_owned(),
            None if self.config.platform == "claude" => {
                return Err(Error::Failed(
                    "session_id is required on Claude Code. Pass CLAUDE_CODE_SESSION_ID from startup context.".into(),
                ));
            }
            None => uuid::Uuid::new_v4().simple().to_string(),
        };

        let _lock = store.lock(&session_id)?;
        let mut stacks = Stacks::load(store.clone(), &session_id, cmd.agent_id.as_deref())?;
        let mut instance = WorkflowSession::new(&session_id, &job.name, &workflow.name, &cmd.goal, &first.name);
        let inputs = resolve_inputs(first, cmd.inputs.as_ref(), &IndexMap::new(), &IndexMap::new());
        instance.start_step(&first.name, 0, inputs.clone());

        let own_was_empty = stacks.own().workflow_stack.is_empty();
        let instance_id = instance.workflow_instance_id.clone();
        if let Some(parent) = stacks.own().workflow_stack.last_mut() {
            parent.record_sub_workflow(&instance_id);
        } else if own_was_empty && stacks.agent.is_some() {
            // A sub-agent's first workflow is a sub-workflow of the main stack's active step.
            if let Some(parent) = stacks.main.workflow_stack.last_mut() {
                parent.record_sub_workflow(&instance_id);
                stacks.save_main()?;
            }
        }
        stacks.own().workflow_stack.push(instance);
        stacks.save_own()?;
        self.write_session_status(root, &store, &session_id);

        Ok(WorkflowStarted {
            important_note: IMPORTANT_NOTE.to_owned(),
            begin_step: active_step_info(&session_id, root, &job, workflow, first, &inputs),
            stack: stacks.entries(),
        })
    }

    /// Validates a step's outputs, runs the quality gate, and advances (or completes) the workflow.
    pub fn finished_step(&self, root: &Path, cmd: FinishStep) -> Result<StepFinished> {
        let session_id = require_session(cmd.session_id.as_deref(), SESSION_REQUIRED, Error::Failed)?;
        if let Some(agent) = &cmd.agent_id {
            check_path_id("agent_id", agent).map_err(Error::Failed)?;
        }
        let store = SessionStore::new(root, &self.config.platform);
        let _lock = store.lock(session_id)?;
        let mut stacks = Stacks::load(store.clone(), session_id, cmd.agent_id.as_deref())?;
        let Some(top) = stacks.own().workflow_stack.last().cloned() else {
            return Err(Error::Failed(NO_SESSION_TO_FINISH.into()));
        };
        let job = self.find_job(root, &store, Some(session_id), &top.job_name)?;
        let workflow = job.select_workflow(&top.workflow_name).map_err(Error::Failed)?;
        let Some(step_index) = workflow.step_index(&top.current_step_id) else {
            return Err(Error::Failed(format!("Current step not found: {}", top.current_step_id)));
        };
        let step = &workflow.steps[step_index];
        self.check_outputs(root, &job, step, &cmd.outputs)?;

        let input_values = top.step_progress.get(&step.name).map(|p| p.input_values.clone()).unwrap_or_default();
        let override_reason = cmd.quality_review_override_reason.as_deref().filter(|r| !r.trim().is_empty());
        if override_reason.is_none() {
            let gate_input = GateInput {
                root,
                job: &job,
                workflow,
                step,
                outputs: &cmd.outputs,
                input_values: &input_values,
                work_summary: cmd.work_summary.as_deref(),
            };
            let project = self.project_rules(root);
            let feedback = gate::run(&gate_input, &project.rules, &self.config.platform)
                .map_err(|err| Error::Failed(format!("Could not write the review instruction files: {err}")))?;
            if let Some(feedback) = feedback {
                let active = stacks.own().workflow_stack.last_mut().expect("the stack has a top");
                active.record_needs_work();
                stacks.save_own()?;
                self.write_session_status(root, &store, session_id);
                return Ok(StepFinished {
                    status: "needs_work",
                    feedback: Some(feedback),
                    begin_step: None,
                    summary: None,
                    all_outputs: None,
                    post_workflow_instructions: None,
                    stack: stacks.entries(),
                });
            }
        }

        let active = stacks.own().workflow_stack.last_mut().expect("the stack has a top");
        active.complete_current_step(cmd.outputs.clone(), cmd.work_summary.clone());
        let next_index = active.current_step_index + 1;
        let result = if next_index >= workflow.steps.len() {
            let all_outputs = active.merged_outputs();
            stacks.own().pop("completed", None);
            StepFinished {
                status: "workflow_complete",
                feedback: None,
                begin_step: None,
                summary: Some(format!("Workflow '{}' completed successfully!", workflow.name)),
                all_outputs: Some(all_outputs),
                post_workflow_instructions: workflow.post_workflow_instructions.clone(),
                stack: Vec::new(),
            }
        } else {
            let next = &workflow.steps[next_index];
            let available = active.merged_outputs();
            let inputs = resolve_inputs(next, None, &available, &IndexMap::new());
            active.start_step(&next.name, next_index, inputs.clone());
            StepFinished {
                status: "next_step",
                feedback: None,
                begin_step: Some(active_step_info(session_id, root, &job, workflow, next, &inputs)),
                summary: None,
                all_outputs: None,
                post_workflow_instructions: None,
                stack: Vec::new(),
            }
        };
        stacks.save_own()?;
        self.write_session_status(root, &store, session_id);
        Ok(StepFinished { stack: stacks.entries(), ..result })
    }

    /// Checks output names, presence, types, and that file outputs exist inside the project.
    fn check_outputs(&self, root: &Path, job: &JobDefinition, step: &crate::job::Step, outputs: &IndexMap<String, Value>) -> Result<()> {
        let mut unknown: Vec<&str> = outputs.keys().filter(|k| !step.outputs.contains_key(*k)).map(String::as_str).collect();
        if !unknown.is_empty() {
            unknown.sort();
            let mut declared: Vec<&str> = step.outputs.keys().map(String::as_str).collect();
            declared.sort();
            return Err(Error::Failed(format!(
                "Unknown output names: {}. Declared outputs: {}",
                unknown.join(", "),
                declared.join(", ")
            )));
        }
        let mut missing: Vec<&str> = step
            .outputs
            .iter()
            .filter(|(name, output)| output.required && !outputs.contains_key(*name))
            .map(|(name, _)| name.as_str())
            .collect();
        if !missing.is_empty() {
            missing.sort();
            return Err(Error::Failed(format!(
                "Missing required outputs: {}. All required outputs must be provided.",
                missing.join(", ")
            )));
        }
        for (name, value) in outputs {
            let Some(argument) = job.argument(name) else { continue };
            match argument.kind {
                ArgumentType::String => {
                    if !value.is_string() {
                        return Err(Error::Failed(format!(
                            "Output '{name}' is type 'string' and must be a string, got {}",
                            if value.is_array() { "list" } else { "another type" }
                        )));
                    }
                }
                ArgumentType::FilePath => {
                    let paths: Vec<&Value> = match value {
                        Value::Array(items) => items.iter().collect(),
                        other => vec![other],
                    };
                    for path in paths {
                        let Some(path) = path.as_str() else {
                            return Err(Error::Failed(format!("Output '{name}': all paths must be strings")));
                        };
                        let full = lexically_inside(root, path).ok_or_else(|| {
                            Error::Failed(format!(
                                "Output '{name}': path '{path}' is outside the project root {}. Give a path inside \
                                 the project, relative to its root.",
                                root.display()
                            ))
                        })?;
                        check_output_file(name, path, &full, root)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Aborts the active workflow of the (session, agent) stack and resumes its parent.
    pub fn abort_workflow(&self, root: &Path, explanation: String, session_id: Option<String>, agent_id: Option<String>) -> Result<WorkflowAborted> {
        let session_id = require_session(session_id.as_deref(), SESSION_REQUIRED, Error::Failed)?;
        if let Some(agent) = &agent_id {
            check_path_id("agent_id", agent).map_err(Error::Failed)?;
        }
        let store = SessionStore::new(root, &self.config.platform);
        let _lock = store.lock(session_id)?;
        let mut stacks = Stacks::load(store.clone(), session_id, agent_id.as_deref())?;
        let Some(aborted) = stacks.own().pop("aborted", Some(explanation.clone())) else {
            return Err(Error::Failed(NO_SESSION.into()));
        };
        stacks.save_own()?;
        self.write_session_status(root, &store, session_id);
        let resumed = stacks.own().workflow_stack.last().map(|w| (w.label(), w.current_step_id.clone()));
        Ok(WorkflowAborted {
            aborted_workflow: aborted.label(),
            aborted_step: aborted.current_step_id.clone(),
            explanation,
            stack: stacks.entries(),
            resumed_workflow: resumed.as_ref().map(|r| r.0.clone()),
            resumed_step: resumed.map(|r| r.1),
        })
    }

    /// Goes back to an earlier (or the current) step, clearing progress from there on.
    pub fn go_to_step(&self, root: &Path, step_id: String, session_id: Option<String>, agent_id: Option<String>) -> Result<WentToStep> {
        let session_id = require_session(session_id.as_deref(), SESSION_REQUIRED, Error::Failed)?;
        if let Some(agent) = &agent_id {
            check_path_id("agent_id", agent).map_err(Error::Failed)?;
        }
        let store = SessionStore::new(root, &self.config.platform);
        let _lock = store.lock(session_id)?;
        let mut stacks = Stacks::load(store.clone(), session_id, agent_id.as_deref())?;
        let Some(top) = stacks.own().workflow_stack.last().cloned() else {
            return Err(Error::Failed(NO_SESSION.into()));
        };
        let job = self.find_job(root, &store, Some(session_id), &top.job_name)?;
        let workflow = job.select_workflow(&top.workflow_name).map_err(Error::Failed)?;
        let Some(target) = workflow.step_index(&step_id) else {
            let names: Vec<&str> = workflow.steps.iter().map(|s| s.name.as_str()).collect();
            return Err(Error::Failed(format!(
                "Step '{step_id}' not found in workflow '{}'. Available steps: {}",
                workflow.name,
                names.join(", ")
            )));
        };
        if target > top.current_step_index {
            return Err(Error::Failed(format!(
                "Cannot go forward to step '{step_id}' (index {target} > current {}). Use finished_step to advance forward.",
                top.current_step_index
            )));
        }
        let invalidated: Vec<String> = workflow.steps[target..].iter().map(|s| s.name.clone()).collect();
        let active = stacks.own().workflow_stack.last_mut().expect("the stack has a top");
        let previous = active.step_progress.get(&step_id).map(|p| p.input_values.clone()).unwrap_or_default();
        for name in &invalidated {
            active.step_progress.shift_remove(name);
        }
        let step = &workflow.steps[target];
        let inputs = resolve_inputs(step, None, &active.merged_outputs(), &previous);
        active.start_step(&step.name, target, inputs.clone());
        stacks.save_own()?;
        self.write_session_status(root, &store, session_id);
        Ok(WentToStep {
            begin_step: active_step_info(session_id, root, &job, workflow, step, &inputs),
            invalidated_steps: invalidated,
            stack: stacks.entries(),
        })
    }

    /// Validates a job definition and stores it as a job of this session only.
    pub fn register_session_job(&self, root: &Path, job_name: &str, yaml: &str, session_id: Option<String>) -> Result<SessionJobRegistered> {
        let session_id = require_session(session_id.as_deref(), SESSION_REQUIRED_FOR_JOBS, Error::Soft)?;
        if !is_job_name(job_name) {
            return Err(Error::Soft(format!("Invalid job name '{job_name}': must match ^[a-z][a-z0-9_]*$")));
        }
        if yaml.len() as u64 > MAX_DEFINITION_BYTES {
            return Err(Error::Soft(format!(
                "The job definition is too large: {} bytes, over the limit of {MAX_DEFINITION_BYTES} bytes. Nothing \
                 was registered.",
                yaml.len()
            )));
        }
        let store = SessionStore::new(root, &self.config.platform);
        let job_dir = store.session_job_dir(session_id, job_name);
        if let Err(err) = cairn_yaml::parse(yaml) {
            return Err(Error::Soft(format!("Invalid YAML syntax: {err}")));
        }
        if let Err(err) = parse_job(yaml, &job_dir) {
            let err = if err.starts_with("Job definition validation failed") {
                err
            } else {
                format!("Job definition validation failed: {err}")
            };
            return Err(Error::Soft(format!(
                "{err}\nNothing was registered. Fix the definition and call register_session_job again."
            )));
        }
        let _lock = store.lock(session_id).map_err(|e| Error::Soft(e.to_string()))?;
        write_atomic(&job_dir.join("job.yml"), yaml.as_bytes(), Durability::Synced).map_err(|e| Error::Soft(e.to_string()))?;
        Ok(SessionJobRegistered {
            status: "registered",
            job_name: job_name.to_owned(),
            job_dir: job_dir.display().to_string(),
            message: format!(
                "Session job '{job_name}' registered successfully. It can be started with \
                 start_workflow(job_name='{job_name}', ...)."
            ),
        })
    }

    /// The job.yml text of a session job.
    pub fn get_session_job(&self, root: &Path, job_name: &str, session_id: Option<String>) -> Result<SessionJob> {
        let session_id = require_session(session_id.as_deref(), SESSION_REQUIRED_FOR_JOBS, Error::Soft)?;
        let not_found = || Error::Soft(format!("Session job '{job_name}' not found for session '{session_id}'."));
        if !is_job_name(job_name) {
            return Err(not_found());
        }
        let store = SessionStore::new(root, &self.config.platform);
        let path = store.session_job_dir(session_id, job_name).join("job.yml");
        let text = confined::read_text(&path, Some(root), Some(MAX_DEFINITION_BYTES)).map_err(|_| not_found())?;
        Ok(SessionJob { job_name: job_name.to_owned(), job_definition_yaml: text })
    }

    /// Active workflows of every session under `root` (all platforms, main stacks), newest first: what an agent needs
    /// to resume after its context was compacted.
    pub fn active_sessions(&self, root: &Path) -> Vec<Value> {
        let sessions = root.join(".deepwork").join("tmp").join("sessions");
        let mut found: Vec<(String, Value)> = Vec::new();
        let platforms = std::fs::read_dir(&sessions).into_iter().flatten().filter_map(|e| e.ok());
        for platform in platforms {
            let dirs = std::fs::read_dir(platform.path()).into_iter().flatten().filter_map(|e| e.ok());
            for dir in dirs {
                if !dir.file_name().to_string_lossy().starts_with("session-") {
                    continue;
                }
                let Ok(file) = read_stack(&dir.path().join("state.json")) else { continue };
                for wf in file.workflow_stack.iter().filter(|w| w.status == "active") {
                    found.push((wf.started_at.clone(), self.describe_active(root, wf)));
                }
            }
        }
        found.sort_by(|a, b| b.0.cmp(&a.0));
        found.into_iter().map(|(_, v)| v).collect()
    }

    fn describe_active(&self, root: &Path, wf: &WorkflowSession) -> Value {
        let completed: Vec<&String> =
            wf.step_progress.values().filter(|p| p.completed_at.is_some()).map(|p| &p.step_id).collect();
        let mut entry = serde_json::json!({
            "session_id": wf.session_id,
            "job_name": wf.job_name,
            "workflow_name": wf.workflow_name,
            "goal": wf.goal,
            "current_step_id": wf.current_step_id,
            "completed_steps": completed,
            "common_job_info": Value::Null,
            "current_step_instructions": Value::Null,
        });
        let store = SessionStore::new(root, &self.config.platform);
        if let Ok(job) = self.find_job(root, &store, Some(&wf.session_id), &wf.job_name)
            && let Some(workflow) = job.workflows.get(&wf.workflow_name)
            && let Some(index) = workflow.step_index(&wf.current_step_id)
        {
            entry["common_job_info"] = workflow.common_job_info.clone().map_or(Value::Null, Value::from);
            entry["current_step_instructions"] = workflow.steps[index].instructions.clone().map_or(Value::Null, Value::from);
            entry["step_number"] = Value::from(index + 1);
            entry["total_steps"] = Value::from(workflow.steps.len());
        }
        entry
    }
}

/// Creates `<root>/.deepwork/tmp/.gitignore` (ignore everything there but itself) if it is missing, so cairn's scratch
/// files (sessions, status, review instructions) never show up as changes. Failures are only logged.
pub fn prepare_tmp_dir(root: &Path) {
    let gitignore = root.join(".deepwork").join("tmp").join(".gitignore");
    if !gitignore.exists()
        && let Err(err) = write_atomic(&gitignore, GITIGNORE.as_bytes(), Durability::Replaced)
    {
        tracing::warn!("could not create {}: {err}", gitignore.display());
    }
}

/// The session id, or the soft error DeepWork gives when it is missing. An id that could escape its directory is
/// refused with `invalid` (a failed call, or a soft error for the session-job tools).
fn require_session<'a>(session_id: Option<&'a str>, missing: &str, invalid: fn(String) -> Error) -> Result<&'a str> {
    match session_id.filter(|s| !s.is_empty()) {
        None => Err(Error::Soft(missing.to_owned())),
        Some(sid) => {
            check_path_id("session_id", sid).map_err(invalid)?;
            Ok(sid)
        }
    }
}

/// An output file must exist, resolve inside the project (a link out of it is refused) and be a regular file or a
/// directory (a FIFO would block whoever reads it).
fn check_output_file(name: &str, path: &str, full: &Path, root: &Path) -> Result<()> {
    let refused = |why: &dyn std::fmt::Display| {
        Error::Failed(format!(
            "Output '{name}': path '{path}' cannot be used: {why}. Give a regular file inside the project, relative \
             to its root."
        ))
    };
    let real = match confined::resolve(full, Some(root)) {
        Ok(real) => real,
        Err(err) if err.is_not_found() => {
            return Err(Error::Failed(format!("Output '{name}': file not found at '{path}'")));
        }
        Err(err) => return Err(refused(&err)),
    };
    match std::fs::metadata(&real) {
        Ok(meta) if meta.is_file() || meta.is_dir() => Ok(()),
        Ok(_) => Err(refused(&confined::Refused::NotRegular)),
        Err(err) => Err(refused(&err)),
    }
}

/// `root/path`, normalised, if it stays inside `root` (absolute paths inside the root are accepted too).
fn lexically_inside(root: &Path, path: &str) -> Option<PathBuf> {
    let joined = root.join(path);
    let mut normal = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                if !normal.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    normal.starts_with(root).then_some(normal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_paths_stay_in_the_project() {
        let root = Path::new("/p");
        assert_eq!(lexically_inside(root, "a/../b.md"), Some(PathBuf::from("/p/b.md")));
        assert_eq!(lexically_inside(root, "/p/x"), Some(PathBuf::from("/p/x")));
        assert_eq!(lexically_inside(root, "../etc/passwd"), None);
        assert_eq!(lexically_inside(root, "/etc/passwd"), None);
    }
}
