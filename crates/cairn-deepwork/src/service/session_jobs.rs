//! Session jobs: a job definition an agent registers for its session only (`register_session_job`), validated
//! before anything is written, and read back (`get_session_job`).

use std::path::Path;

use serde::Serialize;

use crate::confined::{self, MAX_DEFINITION_BYTES};
use crate::ids::is_job_name;
use crate::job::parse_job;
use crate::session_store::{Durability, SessionStore, write_atomic};

use super::{Deepwork, Error, Result, require_session};

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

impl Deepwork {
    /// Validates a job definition and stores it as a job of this session only.
    pub fn register_session_job(&self, root: &Path, job_name: &str, yaml: &str, session_id: Option<String>) -> Result<SessionJobRegistered> {
        let session_id = require_session(session_id.as_deref(), || self.missing_session(root), Error::Soft)?;
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
        let session_id = require_session(session_id.as_deref(), || self.missing_session(root), Error::Soft)?;
        let not_found = || Error::Soft(format!("Session job '{job_name}' not found for session '{session_id}'."));
        if !is_job_name(job_name) {
            return Err(not_found());
        }
        let store = SessionStore::new(root, &self.config.platform);
        let path = store.session_job_dir(session_id, job_name).join("job.yml");
        let text = confined::read_text(&path, Some(root), Some(MAX_DEFINITION_BYTES)).map_err(|_| not_found())?;
        Ok(SessionJob { job_name: job_name.to_owned(), job_definition_yaml: text })
    }
}
