//! Finding jobs: the folders searched, in priority order, and a cache of parsed job.yml files.
//!
//! Folders: `<root>/.deepwork/jobs`, cairn's standard jobs, then each folder of `DEEPWORK_ADDITIONAL_JOBS_FOLDERS`.
//! Within a folder, job directories are taken in name order; a directory is a job directory when it holds an entry
//! named `job.yml`, whatever that entry is (a directory, a FIFO or a link to a device is reported as broken, not
//! passed over). The first directory of a given name wins, for listing and for starting alike, whether it parses or
//! not (a broken project copy is reported, not silently replaced by the standard job of the same name). A job found
//! inside the project must resolve inside it (see `confined`). Parsed jobs are cached by path and invalidated when
//! job.yml's size or modification time changes, so repeated calls do not re-read or re-parse anything.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::confined::boundary_for;
use crate::job::{JobDefinition, load_job};

/// A job directory that failed to load.
#[derive(Debug, Clone)]
pub struct LoadError {
    /// Directory name.
    pub job_name: String,
    /// Directory path.
    pub job_dir: PathBuf,
    /// Why it failed.
    pub error: String,
}

/// Outcome of loading one job directory.
pub type Loaded = Arc<Result<Arc<JobDefinition>, String>>;

/// Parsed job.yml files, keyed by job directory.
#[derive(Debug, Default)]
pub struct JobCache {
    entries: Mutex<HashMap<PathBuf, (Option<(SystemTime, u64)>, Loaded)>>,
}

impl JobCache {
    /// The job in `job_dir` of the project at `root`, parsed again only if job.yml changed since the last call.
    pub fn load(&self, job_dir: &Path, root: &Path) -> Loaded {
        let stamp = std::fs::metadata(job_dir.join("job.yml"))
            .ok()
            .and_then(|m| Some((m.modified().ok()?, m.len())));
        if let Some((cached_stamp, loaded)) = self.entries.lock().expect("job cache lock").get(job_dir)
            && stamp.is_some()
            && *cached_stamp == stamp
        {
            return loaded.clone();
        }
        let loaded: Loaded = Arc::new(load_job(job_dir, boundary_for(job_dir, root)).map(Arc::new));
        self.entries
            .lock()
            .expect("job cache lock")
            .insert(job_dir.to_path_buf(), (stamp, loaded.clone()));
        loaded
    }
}

/// The job folders for a project root, in priority order.
pub fn job_folders(root: &Path, standard_jobs: &Path, additional: &[PathBuf]) -> Vec<PathBuf> {
    let mut folders = vec![root.join(".deepwork").join("jobs"), standard_jobs.to_path_buf()];
    folders.extend(additional.iter().cloned());
    folders
}

/// Folders named by `DEEPWORK_ADDITIONAL_JOBS_FOLDERS`-style text: colon-separated, blanks ignored.
pub fn split_folder_list(value: &str) -> Vec<PathBuf> {
    value.split(':').map(str::trim).filter(|s| !s.is_empty()).map(PathBuf::from).collect()
}

/// Whether `dir` is a job directory: it holds an entry named `job.yml` (of any kind, even a dangling link).
pub(crate) fn holds_job_file(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join("job.yml")).is_ok()
}

/// Every job directory in the folders, first of each name only.
pub fn job_dirs(folders: &[PathBuf]) -> Vec<PathBuf> {
    let mut seen = HashSet::new();
    let mut dirs = Vec::new();
    for folder in folders {
        let Ok(entries) = std::fs::read_dir(folder) else { continue };
        let mut children: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        children.sort();
        for child in children {
            if holds_job_file(&child)
                && let Some(name) = child.file_name().and_then(|n| n.to_str())
                && seen.insert(name.to_owned())
            {
                dirs.push(child);
            }
        }
    }
    dirs
}

/// The directory of the job named `name` (by directory name), if any folder has one.
pub fn find_job_dir(folders: &[PathBuf], name: &str) -> Option<PathBuf> {
    folders.iter().map(|f| f.join(name)).find(|dir| holds_job_file(dir))
}

/// Loads every job of the project at `root`: the ones that parse, and the errors of the ones that don't.
pub fn load_all(cache: &JobCache, folders: &[PathBuf], root: &Path) -> (Vec<Arc<JobDefinition>>, Vec<LoadError>) {
    let mut jobs = Vec::new();
    let mut errors = Vec::new();
    for dir in job_dirs(folders) {
        match &*cache.load(&dir, root) {
            Ok(job) => jobs.push(job.clone()),
            Err(error) => {
                let job_name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                tracing::warn!("Skipping invalid job '{job_name}': {error}");
                errors.push(LoadError { job_name, job_dir: dir, error: error.clone() });
            }
        }
    }
    (jobs, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_folder_lists() {
        assert_eq!(split_folder_list(" /a : :/b:"), vec![PathBuf::from("/a"), PathBuf::from("/b")]);
    }

    #[test]
    fn cache_reparses_only_after_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let job_dir = dir.path().join("j");
        std::fs::create_dir(&job_dir).unwrap();
        std::fs::write(job_dir.join("job.yml"), "").unwrap();
        let cache = JobCache::default();
        let first = cache.load(&job_dir, dir.path());
        assert!(Arc::ptr_eq(&first, &cache.load(&job_dir, dir.path())));
        std::fs::write(job_dir.join("job.yml"), "name: [").unwrap();
        assert!(!Arc::ptr_eq(&first, &cache.load(&job_dir, dir.path())));
    }
}
