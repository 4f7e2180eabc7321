//! The deepwork facade: every operation the MCP tools (and the CLI) perform, as plain Rust.
//!
//! Each operation takes the project root it runs against (resolved by the caller per call) and a command, and returns
//! a result whose field order is the wire order. Operations that change a session hold the session's lock from the
//! first read to the last write, and validate everything before changing anything: a failed call leaves state as it
//! was.
//!
//! Here: the service itself (configuration, caches, job look-up, `get_workflows`, session status files). The stack
//! moves (`start_workflow`, `finished_step`, `abort_workflow`, `go_to_step`) are in `steps.rs` over `stacks.rs`, with
//! the output checks of `finished_step` in `outputs.rs`; session jobs in `session_jobs.rs`; the active sessions an
//! agent resumes from in `active.rs`; review operations in `crate::reviews`.

mod active;
mod outputs;
mod session_jobs;
mod stacks;
mod steps;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::deepreview::DeepreviewCache;
use crate::deepschema::DeepschemaCache;
use crate::discovery::{JobCache, LoadError, find_job_dir, holds_job_file, job_folders, load_all};
use crate::confined::{self, MAX_DEFINITION_BYTES};
use crate::host_names::HostNames;
use crate::ids::check_path_id;
use crate::job::{JOB_SCHEMA, JobDefinition};
use crate::server_text;
use crate::session_store::{Durability, SessionStore, write_atomic};
use crate::status::StatusWriter;
use crate::step_info::how_to_invoke;

pub use session_jobs::{SessionJob, SessionJobRegistered};
pub use steps::{FinishStep, StartWorkflow, StepFinished, WentToStep, WorkflowAborted, WorkflowStarted};

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
    /// What the host calls the tools, the reviewer agent and commands the texts name.
    pub names: HostNames,
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

const GITIGNORE: &str = "# Ignore everything in this directory\n*\n# But keep this .gitignore\n!.gitignore\n";

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
        server_text::issue_detected(&self.load_jobs(root).1, &self.config.names)
    }

    /// The server instructions for a client working in `root`.
    pub fn server_instructions(&self, root: &Path) -> String {
        let (jobs, errors) = self.load_jobs(root);
        server_text::server_instructions(&jobs, &errors, &self.config.names, &self.config.platform)
    }

    /// Lists jobs and workflows, and refreshes the job manifest status file; also the `issue_detected` text when some
    /// job fails to load (from the same look at the job folders).
    pub fn get_workflows(&self, root: &Path) -> (WorkflowList, Option<String>) {
        let (jobs, errors) = self.load_jobs(root);
        self.refresh_manifest(root, &jobs);
        let issue = server_text::issue_detected(&errors, &self.config.names);
        let list = WorkflowList {
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
                            how_to_invoke: how_to_invoke(&job.name, wf, &self.config.names),
                        })
                        .collect(),
                })
                .collect(),
            errors: errors
                .iter()
                .map(|e| JobLoadErrorInfo {
                    job_name: e.job_name.clone(),
                    job_dir: e.job_dir.display().to_string(),
                    error: server_text::error_with_suggestion(e, &self.config.names),
                })
                .collect(),
        };
        (list, issue)
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

/// The session id, or (when it is missing) the soft error `missing` words. An id that could escape its directory is
/// refused with `invalid` (a failed call, or a soft error for the session-job tools).
fn require_session<'a>(
    session_id: Option<&'a str>,
    missing: impl FnOnce() -> String,
    invalid: fn(String) -> Error,
) -> Result<&'a str> {
    match session_id.filter(|s| !s.is_empty()) {
        None => Err(Error::Soft(missing())),
        Some(sid) => {
            check_path_id("session_id", sid).map_err(invalid)?;
            Ok(sid)
        }
    }
}
