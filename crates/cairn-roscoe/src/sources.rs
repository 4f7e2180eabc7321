//! Where workflow files live (§2.1): the repo source `<project root>/.roscoe/workflows/` and the global source
//! `<cairn home>/workflows/`, each holding `<id>.yaml` (or `.yml`) and an optional asset folder `<id>/` beside it.
//!
//! Ids are checked before they become paths, so no id can leave its source directory. The repo source exists only in
//! project scope and only when its directory does; it shadows the global source (repo-first resolution). The cairn
//! home is passed in: nothing here reads the environment. Reading and writing workflow *contents* is the service's job.

use std::fs;
use std::path::{Path, PathBuf};

use crate::definition;
use crate::error::Error;
use crate::files;
use crate::scope::Scope;
use crate::source::Source;

/// The largest workflow file read or written (1 MiB, §2.1); a larger file is refused before it is read.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;

/// Checks that `id` is a valid workflow id (and so a safe file stem).
pub fn check_id(id: &str) -> Result<(), Error> {
    if definition::is_valid_id(id) {
        Ok(())
    } else {
        Err(Error::InvalidId { id: id.to_owned() })
    }
}

/// A workflow file found on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Located {
    pub(crate) id: String,
    pub(crate) source: Source,
    pub(crate) path: PathBuf,
}

impl Located {
    /// The asset folder beside the file (it may not exist).
    pub(crate) fn assets(&self) -> PathBuf {
        self.path.with_file_name(&self.id)
    }

    /// The file's text; `invalid_config` when it is not a regular file (a directory, FIFO, device), is larger than
    /// [`MAX_FILE_BYTES`] (refused before it is read) or is not UTF-8.
    pub(crate) fn read(&self) -> Result<String, Error> {
        let shown = self.path.display();
        let invalid = |message: String| Error::InvalidConfig { message, details: Vec::new() };
        let bytes = files::read_regular(&self.path, MAX_FILE_BYTES as u64).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidInput => {
                invalid(format!("{shown} cannot be a workflow: {e}; remove it or replace it with a YAML file"))
            }
            std::io::ErrorKind::FileTooLarge => {
                invalid(format!("{shown} is larger than the 1 MiB a workflow may be ({e}); split the workflow"))
            }
            _ => Error::io("read", &self.path, &e),
        })?;
        String::from_utf8(bytes).map_err(|_| invalid(format!("{shown} is not UTF-8 text")))
    }
}

/// The workflow sources of one scope.
#[derive(Clone, Debug)]
pub(crate) struct Sources {
    global: PathBuf,
    repo: Option<PathBuf>,
}

impl Sources {
    /// The sources a call in `scope` sees, with the cairn home `home`.
    pub(crate) fn new(home: &Path, scope: &Scope) -> Self {
        Sources {
            global: home.join("workflows"),
            repo: scope
                .root()
                .map(|root| root.join(".roscoe").join("workflows")),
        }
    }

    /// The directory of `source`; `no_repo_source` for repo in global scope.
    pub(crate) fn dir(&self, source: Source) -> Result<&Path, Error> {
        match source {
            Source::Global => Ok(&self.global),
            Source::Repo => self.repo.as_deref().ok_or(Error::NoRepoSource),
        }
    }

    /// Whether a repo source exists (project scope and its directory is there).
    pub(crate) fn has_repo(&self) -> bool {
        self.repo.as_deref().is_some_and(Path::is_dir)
    }

    /// The source writers default to: repo when it exists, else global.
    pub(crate) fn default_source(&self) -> Source {
        if self.has_repo() {
            Source::Repo
        } else {
            Source::Global
        }
    }

    /// The sources in lookup order (repo first when it exists).
    pub(crate) fn existing(&self) -> Vec<Source> {
        if self.has_repo() {
            vec![Source::Repo, Source::Global]
        } else {
            vec![Source::Global]
        }
    }

    /// The path a new workflow `id` gets in `source`.
    pub(crate) fn new_path(&self, source: Source, id: &str) -> Result<PathBuf, Error> {
        check_id(id)?;
        Ok(self.dir(source)?.join(format!("{id}.yaml")))
    }

    /// The file of `id` in `source`, if any; `invalid_config` when both `.yaml` and `.yml` exist.
    pub(crate) fn find(&self, source: Source, id: &str) -> Result<Option<Located>, Error> {
        check_id(id)?;
        let dir = self.dir(source)?;
        // Whatever is there counts, a directory or a FIFO too: reading it reports what is wrong with it.
        let found: Vec<PathBuf> = ["yaml", "yml"]
            .iter()
            .map(|ext| dir.join(format!("{id}.{ext}")))
            .filter(|p| fs::symlink_metadata(p).is_ok())
            .collect();
        match found.as_slice() {
            [] => Ok(None),
            [path] => Ok(Some(Located {
                id: id.to_owned(),
                source,
                path: path.clone(),
            })),
            _ => Err(Error::InvalidConfig {
                message: format!(
                    "ambiguous workflow file: both {id}.yaml and {id}.yml exist in {}; delete one",
                    dir.display()
                ),
                details: Vec::new(),
            }),
        }
    }

    /// Resolves `id`: in `source` when given, else repo first, then global.
    pub(crate) fn resolve(&self, id: &str, source: Option<Source>) -> Result<Located, Error> {
        check_id(id)?;
        let order = match source {
            Some(source) => {
                self.dir(source)?;
                vec![source]
            }
            None => self.existing(),
        };
        for source in order {
            if let Some(found) = self.find(source, id)? {
                return Ok(found);
            }
        }
        Err(Error::NotFound {
            id: id.to_owned(),
            in_source: source,
        })
    }

    /// Every workflow file in scope, by id, repo before global: every entry named `<id>.yaml` or `<id>.yml`, whatever
    /// it is (a directory or a link to a device is listed, and reading it says why it is not a workflow).
    pub(crate) fn list(&self) -> Result<Vec<Located>, Error> {
        let mut all = Vec::new();
        for source in self.existing() {
            let dir = self.dir(source)?;
            let entries = match fs::read_dir(dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io("read", dir, &e)),
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let (Some(stem), Some(ext)) = (
                    path.file_stem().and_then(|s| s.to_str()),
                    path.extension().and_then(|s| s.to_str()),
                ) else {
                    continue;
                };
                if matches!(ext, "yaml" | "yml") && definition::is_valid_id(stem) {
                    all.push(Located {
                        id: stem.to_owned(),
                        source,
                        path,
                    });
                }
            }
        }
        all.sort_by(|a, b| (&a.id, a.source, &a.path).cmp(&(&b.id, b.source, &b.path)));
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(dir: &Path) -> Scope {
        Scope::project(dir.to_str().unwrap()).unwrap()
    }

    #[test]
    fn ids_that_could_escape_are_invalid() {
        for bad in ["../x", "a/b", "", ".hidden", "A", "a b", "a.yaml"] {
            assert_eq!(check_id(bad).unwrap_err().as_code(), "invalid_id", "{bad}");
        }
        check_id("fix-failing_tests2").unwrap();
    }

    #[test]
    fn repo_source_exists_only_with_its_directory() {
        let home = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        let sources = Sources::new(home.path(), &project(proj.path()));
        assert!(!sources.has_repo());
        assert_eq!(sources.default_source(), Source::Global);
        fs::create_dir_all(proj.path().join(".roscoe/workflows")).unwrap();
        assert!(sources.has_repo());
        assert_eq!(sources.default_source(), Source::Repo);

        let global = Sources::new(home.path(), &Scope::Global);
        assert_eq!(
            global.dir(Source::Repo).unwrap_err().as_code(),
            "no_repo_source"
        );
    }

    #[test]
    fn resolve_is_repo_first_and_list_orders_repo_before_global() {
        let home = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        let repo = proj.path().join(".roscoe/workflows");
        fs::create_dir_all(&repo).unwrap();
        fs::create_dir_all(home.path().join("workflows")).unwrap();
        fs::write(repo.join("a.yaml"), "").unwrap();
        fs::write(home.path().join("workflows/a.yaml"), "").unwrap();
        fs::write(home.path().join("workflows/b.yml"), "").unwrap();
        fs::write(home.path().join("workflows/notes.txt"), "").unwrap();
        let sources = Sources::new(home.path(), &project(proj.path()));
        assert_eq!(sources.resolve("a", None).unwrap().source, Source::Repo);
        assert_eq!(
            sources.resolve("a", Some(Source::Global)).unwrap().source,
            Source::Global
        );
        assert_eq!(sources.resolve("b", None).unwrap().source, Source::Global);
        assert_eq!(
            sources.resolve("c", None).unwrap_err().as_code(),
            "not_found"
        );
        let listed: Vec<(String, Source)> = sources
            .list()
            .unwrap()
            .into_iter()
            .map(|l| (l.id, l.source))
            .collect();
        assert_eq!(
            listed,
            [
                ("a".into(), Source::Repo),
                ("a".into(), Source::Global),
                ("b".into(), Source::Global)
            ]
        );
    }

    #[test]
    fn yaml_and_yml_together_are_ambiguous() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("workflows");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("a.yaml"), "").unwrap();
        fs::write(dir.join("a.yml"), "").unwrap();
        let sources = Sources::new(home.path(), &Scope::Global);
        assert_eq!(
            sources.resolve("a", None).unwrap_err().as_code(),
            "invalid_config"
        );
    }

    #[test]
    fn oversized_files_are_invalid_config() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("big.yaml");
        fs::write(&path, vec![b'#'; MAX_FILE_BYTES + 1]).unwrap();
        let located = Located {
            id: "big".into(),
            source: Source::Global,
            path,
        };
        assert_eq!(located.read().unwrap_err().as_code(), "invalid_config");
    }
}
