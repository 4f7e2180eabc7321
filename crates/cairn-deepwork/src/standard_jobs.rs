//! cairn's standard jobs (`deepwork_jobs`, `deepplan`, `deepwork_reviews`), embedded in the binary.
//!
//! Agents receive a job's directory (`job_dir`) to read its templates and reference files, so the embedded files are
//! written out once to `<cairn home>/deepwork/standard_jobs/<content hash>/` and discovered there like any job folder.
//! The hash in the path means a new cairn version never reads an older copy, and writing is atomic (a complete
//! temporary directory is renamed into place), so concurrent servers never see a half-written folder.

use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};
use sha2::{Digest, Sha256};

static STANDARD_JOBS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/standard_jobs");

/// Writes the standard jobs under `home` if they are not there yet, and returns their folder.
pub fn materialize(home: &Path) -> std::io::Result<PathBuf> {
    let target = home.join("deepwork").join("standard_jobs").join(content_hash());
    if target.is_dir() {
        return Ok(target);
    }
    let parent = target.parent().expect("the target has a parent");
    std::fs::create_dir_all(parent)?;
    let staging = tempfile::tempdir_in(parent)?;
    write_dir(&STANDARD_JOBS, staging.path())?;
    match std::fs::rename(staging.path(), &target) {
        Ok(()) => {
            // The directory now lives at `target`; don't let the guard delete it.
            let _ = staging.keep();
            Ok(target)
        }
        // Another process got there first with identical content.
        Err(_) if target.is_dir() => Ok(target),
        Err(err) => Err(err),
    }
}

fn write_dir(dir: &Dir<'_>, base: &Path) -> std::io::Result<()> {
    for file in dir.files() {
        let path = base.join(file.path());
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, file.contents())?;
    }
    for sub in dir.dirs() {
        write_dir(sub, base)?;
    }
    Ok(())
}

/// First 16 hex digits of a SHA-256 over every embedded path and content.
fn content_hash() -> String {
    let mut hasher = Sha256::new();
    hash_dir(&STANDARD_JOBS, &mut hasher);
    let digest = hasher.finalize();
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

fn hash_dir(dir: &Dir<'_>, hasher: &mut Sha256) {
    for file in dir.files() {
        hasher.update(file.path().to_string_lossy().as_bytes());
        hasher.update([0]);
        hasher.update(file.contents());
        hasher.update([0]);
    }
    for sub in dir.dirs() {
        hash_dir(sub, hasher);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::{JobCache, load_all};

    #[test]
    fn standard_jobs_are_written_once_and_all_parse() {
        let home = tempfile::tempdir().unwrap();
        let folder = materialize(home.path()).unwrap();
        assert_eq!(materialize(home.path()).unwrap(), folder);
        let (jobs, errors) = load_all(&JobCache::default(), &[folder]);
        assert!(errors.is_empty(), "{errors:?}");
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["deepplan", "deepwork_jobs", "deepwork_reviews"]);
        let workflows = |job: &str| -> Vec<String> {
            jobs.iter().find(|j| j.name == job).unwrap().workflows.keys().cloned().collect()
        };
        assert_eq!(workflows("deepplan"), ["create_deep_plan"]);
        for wf in ["new_job", "repair", "learn", "shared_jobs"] {
            assert!(workflows("deepwork_jobs").contains(&wf.to_owned()), "{wf}");
        }
        for wf in ["discover_rules", "add_document_update_rule"] {
            assert!(workflows("deepwork_reviews").contains(&wf.to_owned()), "{wf}");
        }
    }
}
