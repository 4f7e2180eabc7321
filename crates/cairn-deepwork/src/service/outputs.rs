//! What `finished_step` checks of a step's outputs before its quality gate: every name declared, every required one
//! given, strings where strings are declared, and file paths that stay inside the project and name an existing
//! regular file or directory.

use std::path::{Component, Path, PathBuf};

use indexmap::IndexMap;
use serde_json::Value;

use crate::confined;
use crate::job::{ArgumentType, JobDefinition, Step};

use super::{Deepwork, Error, Result};

impl Deepwork {
    /// Checks output names, presence, types, and that file outputs exist inside the project.
    pub(super) fn check_outputs(&self, root: &Path, job: &JobDefinition, step: &Step, outputs: &IndexMap<String, Value>) -> Result<()> {
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
