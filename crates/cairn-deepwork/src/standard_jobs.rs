//! cairn's standard jobs (`deepwork_jobs`, `deepplan`, `deepwork_reviews`) and standard DeepSchemas (`claude_settings`,
//! `deepreview`, `deepschema`, `job_yml`, `requirements_file`), embedded in the binary.
//!
//! Agents receive a job's directory (`job_dir`) to read its templates and reference files, and schema reviews inline
//! files that sit beside a schema's manifest, so the embedded folders are written out once to
//! `<cairn home>/deepwork/standard_jobs/<content hash>/` and `<cairn home>/deepwork/standard_schemas/<content hash>/`
//! and discovered there like any job or schema folder. The hash in the path means a new cairn version never reads an
//! older copy, and writing is atomic (a complete temporary directory is renamed into place), so concurrent servers
//! never see a half-written folder.

use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};
use sha2::{Digest, Sha256};

static STANDARD_JOBS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/standard_jobs");
static STANDARD_SCHEMAS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/standard_schemas");

/// Writes the standard jobs under `home` if they are not there yet, and returns their folder.
pub fn materialize(home: &Path) -> std::io::Result<PathBuf> {
    materialize_dir(home, "standard_jobs", &STANDARD_JOBS)
}

/// Writes the standard DeepSchemas under `home` if they are not there yet, and returns their folder (a named schema
/// folder: one subdirectory with a `deepschema.yml` per schema).
pub fn materialize_schemas(home: &Path) -> std::io::Result<PathBuf> {
    materialize_dir(home, "standard_schemas", &STANDARD_SCHEMAS)
}

/// Writes `dir` to `<home>/deepwork/<name>/<content hash>/` unless it is already there.
fn materialize_dir(home: &Path, name: &str, dir: &Dir<'_>) -> std::io::Result<PathBuf> {
    let target = home.join("deepwork").join(name).join(content_hash(dir));
    if target.is_dir() {
        return Ok(target);
    }
    let parent = target.parent().expect("the target has a parent");
    std::fs::create_dir_all(parent)?;
    let staging = tempfile::tempdir_in(parent)?;
    write_dir(dir, staging.path())?;
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
fn content_hash(dir: &Dir<'_>) -> String {
    let mut hasher = Sha256::new();
    hash_dir(dir, &mut hasher);
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
    use crate::deepschema::{DeepschemaCache, schema_folders};
    use crate::discovery::{JobCache, load_all};

    #[test]
    fn standard_jobs_are_written_once_and_all_parse() {
        let home = tempfile::tempdir().unwrap();
        let folder = materialize(home.path()).unwrap();
        assert_eq!(materialize(home.path()).unwrap(), folder);
        let (jobs, errors) = load_all(&JobCache::default(), &[folder], home.path());
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

    #[test]
    fn standard_schemas_are_complete_and_make_one_rule_each() {
        let home = tempfile::tempdir().unwrap();
        let folder = materialize_schemas(home.path()).unwrap();
        assert_eq!(materialize_schemas(home.path()).unwrap(), folder);
        assert_ne!(folder, materialize(home.path()).unwrap());
        let project = tempfile::tempdir().unwrap();
        let set = DeepschemaCache::default().load(project.path(), &schema_folders(project.path(), &folder, &[]));
        assert!(set.errors.is_empty(), "{:?}", set.errors);
        let names: Vec<&str> = set.named_schemas.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["claude_settings", "deepreview", "deepschema", "job_yml", "requirements_file"]);
        assert!(set.named_schemas.iter().all(|s| !s.summary.is_empty() && !s.matchers.is_empty()));
        assert_eq!(set.rules.len(), 5);
        for schema in &set.named {
            if let Some(json_schema) = &schema.json_schema {
                let text = std::fs::read_to_string(&json_schema.absolute).unwrap();
                let value: serde_json::Value = serde_json::from_str(&text).unwrap();
                jsonschema::draft7::new(&value).unwrap_or_else(|e| panic!("{}: {e}", json_schema.absolute.display()));
            }
        }
        assert_eq!(set.named[0].matchers, [".claude/settings*.json"]);
        assert_eq!(set.named[2].matchers, ["**/deepschema.yml", "**/.deepschema.*.yml"]);
    }

    #[test]
    fn standard_schemas_carry_the_current_json_schemas() {
        let copies = [
            ("job_yml/job.schema.json", crate::job::JOB_SCHEMA, "src/job.schema.json"),
            ("deepreview/deepreview.schema.json", crate::deepreview::DEEPREVIEW_SCHEMA, "src/deepreview.schema.json"),
            ("deepschema/deepschema.schema.json", crate::deepschema::DEEPSCHEMA_SCHEMA, "src/deepschema.schema.json"),
        ];
        for (copy, original, source) in copies {
            let embedded = STANDARD_SCHEMAS.get_file(copy).unwrap().contents_utf8().unwrap();
            assert!(
                embedded == original,
                "standard_schemas/{copy} differs from {source}: copy {source} over it (the standard schema points reviewers at it)"
            );
        }
    }
}
