//! Which folders the callers of a server may name ([`Reach`]): any, on a server the local user runs for themselves
//! (stdio `roscoe mcp`, the command line), or only the projects `cairn serve` serves (its `--project` folders) and
//! global scope, on a server whoever reaches its address calls.
//!
//! On a confined server a `cwd` is first checked by its text — with `.` and `..` folded — against the served project
//! roots, so a folder elsewhere is refused (`not_a_project`) before anything there is read, created or run (git
//! included). A `cwd` that passes is resolved to its real path, which must still be inside a served project (a link
//! out of one is refused the same way), and only then is git asked for its top level, which must be inside one too.
//! A file a caller names (`skill_path`) is held to the scope's project root and the standard skill roots the same
//! way: by its text, then by its real path.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::error::Error;
use crate::scope::{Scope, directory};

/// Which folders a server's callers may name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Reach {
    /// Any folder: the local user's own servers (stdio, the command line).
    #[default]
    Anywhere,
    /// Only these project roots (canonical) and global scope: `cairn serve`.
    Projects(Arc<[PathBuf]>),
}

impl Reach {
    /// The reach of a `cairn serve` that serves `dirs`, each resolved to its project root as a `cwd` is.
    pub fn projects(dirs: &[PathBuf]) -> Result<Reach, Error> {
        let mut roots: Vec<PathBuf> = Vec::new();
        for dir in dirs {
            let scope = Scope::project(&dir.to_string_lossy())?;
            if let Some(root) = scope.root().filter(|root| !roots.iter().any(|r| r == root)) {
                roots.push(root.to_path_buf());
            }
        }
        Ok(Reach::Projects(roots.into()))
    }

    /// The served project roots (none for [`Reach::Anywhere`], which serves every folder).
    pub fn roots(&self) -> &[PathBuf] {
        match self {
            Reach::Anywhere => &[],
            Reach::Projects(roots) => roots,
        }
    }

    /// The scope of a call's `cwd` / `global`, as [`Scope::resolve`] — on a confined server only inside a served
    /// project (see the module doc), `not_a_project` otherwise.
    pub fn resolve(&self, cwd: Option<&str>, global: Option<bool>) -> Result<Scope, Error> {
        let (Reach::Projects(roots), Some(given), false) = (self, cwd, global == Some(true)) else {
            return Scope::resolve(cwd, global);
        };
        let refused = || Error::NotAProject { cwd: given.to_owned(), served: roots.to_vec() };
        let path = Path::new(given);
        if path.is_absolute() && !inside(&folded(path), roots) {
            return Err(refused());
        }
        let real = directory(given)?;
        if !inside(&real, roots) {
            return Err(refused());
        }
        let scope = Scope::of_directory(real);
        match scope.root() {
            Some(root) if inside(root, roots) => Ok(scope),
            _ => Err(refused()),
        }
    }

    /// Whether the absolute `path` may be read in `scope`: anywhere on an unconfined server; on a confined one only
    /// inside the scope's project root or one of `also` (by `path`'s text with `.` and `..` folded, so call it
    /// before touching the disk, and again with the real path).
    pub(crate) fn admits(&self, scope: &Scope, path: &Path, also: &[PathBuf]) -> bool {
        if *self == Reach::Anywhere {
            return true;
        }
        let mut places: Vec<PathBuf> = scope.root().map(Path::to_path_buf).into_iter().collect();
        for dir in also {
            places.push(dir.clone());
            places.extend(dir.canonicalize());
        }
        inside(&folded(path), &places)
    }
}

/// Whether `path` is one of `roots` or inside one.
fn inside(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|root| path.starts_with(root))
}

/// `path` with `.` dropped and each `..` taking away the component before it, by the text alone.
fn folded(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(reach: &Reach, cwd: &str) -> Result<Scope, Error> {
        reach.resolve(Some(cwd), None)
    }

    #[test]
    fn a_confined_server_takes_only_folders_of_its_projects_and_global() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let project = base.join("proj");
        std::fs::create_dir_all(project.join("src")).unwrap();
        crate::scope::tests::git_init(&project);
        std::fs::create_dir_all(base.join("proj2")).unwrap();
        std::os::unix::fs::symlink(&base, project.join("up")).unwrap();
        let reach = Reach::projects(std::slice::from_ref(&project)).unwrap();
        assert_eq!(reach.roots(), [project.clone()]);

        let at = |p: &Path| p.to_str().unwrap().to_owned();
        assert_eq!(check(&reach, &at(&project.join("src"))).unwrap().root(), Some(project.as_path()));
        assert_eq!(check(&reach, &format!("{}/src/../src/.", at(&project))).unwrap().root(), Some(project.as_path()));
        for outside in [at(&base), at(&base.join("proj2")), format!("{}/../proj2", at(&project)), at(&project.join("up")), "/".into()] {
            let error = check(&reach, &outside).unwrap_err();
            assert_eq!(error.as_code(), "not_a_project", "{outside}");
            assert_eq!(error.body()["cwd"], outside.as_str());
            assert_eq!(error.body()["projects"], serde_json::json!([project]));
        }
        let missing = at(&base.join("missing/dir"));
        assert_eq!(check(&reach, &missing).unwrap_err().as_code(), "not_a_project");
        assert_eq!(check(&reach, "relative").unwrap_err().as_code(), "CWD_INVALID");
        assert_eq!(check(&reach, &at(&project.join("gone"))).unwrap_err().as_code(), "CWD_INVALID");
        assert_eq!(reach.resolve(None, Some(true)).unwrap(), Scope::Global);
        assert_eq!(reach.resolve(None, None).unwrap_err().as_code(), "CWD_REQUIRED");
        assert_eq!(Reach::Anywhere.resolve(Some(&at(&base)), None).unwrap().root(), Some(base.as_path()));
    }

    #[test]
    fn files_are_admitted_inside_the_project_or_the_places_given() {
        let project = PathBuf::from("/srv/proj");
        let scope = Scope::Project { cwd: project.clone(), root: project.clone(), project_id: "p".into() };
        let reach = Reach::Projects(Arc::from(vec![project.clone()]));
        let skills = [PathBuf::from("/home/u/.claude/skills")];
        assert!(reach.admits(&scope, Path::new("/srv/proj/docs/a.md"), &skills));
        assert!(reach.admits(&scope, Path::new("/home/u/.claude/skills/x/SKILL.md"), &skills));
        assert!(!reach.admits(&scope, Path::new("/srv/proj/../secret/SKILL.md"), &skills));
        assert!(!reach.admits(&scope, Path::new("/etc/SKILL.md"), &skills));
        assert!(!reach.admits(&Scope::Global, Path::new("/srv/proj/docs/a.md"), &skills));
        assert!(Reach::Anywhere.admits(&Scope::Global, Path::new("/etc/SKILL.md"), &[]));
    }
}
