//! A call's scope (§3): exactly one of `cwd` or `global: true`, resolved to a project (root + projectId) or global.
//!
//! A `cwd` is canonicalised; its project root is `git rev-parse --show-toplevel` run there (each worktree is its
//! own project), or the canonical `cwd` itself outside git. projectId is the first 16 hex chars of the SHA-256 of the
//! canonical root path. Every call resolves its own [`Scope`] value and passes it along, so two calls with different
//! `cwd`s never share a project. This module does not touch the database.
//!
//! git's answer is remembered per directory together with the nearest `.git` entry a plain walk up from it finds
//! (a few `stat`s): while that entry stays where it was, git would answer the same, so the call spawns no process;
//! when a repository appears, moves or goes away between the directory and its old root, git is asked again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{LazyLock, Mutex};

use sha2::{Digest, Sha256};

use crate::error::Error;

/// Variables that would point git at another repository than the one containing the directory it runs in.
const GIT_LOCATION_VARIABLES: [&str; 6] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
];

/// Where a call applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// A project: the caller's `cwd` and its project root.
    Project {
        /// The canonical `cwd`.
        cwd: PathBuf,
        /// The project root: the canonical git top-level, or the canonical `cwd` itself outside git.
        root: PathBuf,
        /// First 16 hex chars of sha256(root).
        project_id: String,
    },
    /// The global namespace (projectId `""`).
    Global,
}

impl Scope {
    /// Resolves the scope inputs of a tool call. `global: Some(false)` counts as absent.
    pub fn resolve(cwd: Option<&str>, global: Option<bool>) -> Result<Scope, Error> {
        match (cwd, global == Some(true)) {
            (None, false) => Err(Error::CwdRequired),
            (Some(cwd), true) => Err(Error::CwdGlobalConflict {
                cwd: cwd.to_owned(),
            }),
            (None, true) => Ok(Scope::Global),
            (Some(cwd), false) => Scope::project(cwd),
        }
    }

    /// The project scope of `cwd`.
    pub fn project(cwd: &str) -> Result<Scope, Error> {
        Ok(Scope::of_directory(directory(cwd)?))
    }

    /// The project scope of the canonical directory `cwd` (git is asked for its top level).
    pub(crate) fn of_directory(cwd: PathBuf) -> Scope {
        let root = remembered_toplevel(&cwd).unwrap_or_else(|| cwd.clone());
        Scope::Project {
            project_id: project_id(&root),
            cwd,
            root,
        }
    }

    /// The projectId: 16 hex chars for a project, `""` for global.
    pub fn project_id(&self) -> &str {
        match self {
            Scope::Project { project_id, .. } => project_id,
            Scope::Global => "",
        }
    }

    /// The project root, `None` in global scope.
    pub fn root(&self) -> Option<&Path> {
        match self {
            Scope::Project { root, .. } => Some(root),
            Scope::Global => None,
        }
    }
}

/// The canonical path of `cwd`, which must be an absolute path to an existing directory (`CWD_INVALID` otherwise).
pub(crate) fn directory(cwd: &str) -> Result<PathBuf, Error> {
    let invalid = |reason: &str| Error::CwdInvalid {
        cwd: cwd.to_owned(),
        reason: reason.to_owned(),
    };
    let path = Path::new(cwd);
    if cwd.is_empty() || !path.is_absolute() {
        return Err(invalid("is not an absolute path"));
    }
    let canonical = path.canonicalize().map_err(|_| invalid("does not exist"))?;
    if !canonical.is_dir() {
        return Err(invalid("is not a directory"));
    }
    Ok(canonical)
}

/// First 16 hex chars of sha256 of the path's UTF-8 text (lossy for non-UTF-8 paths).
pub fn project_id(root: &Path) -> String {
    let digest = Sha256::digest(root.to_string_lossy().as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// git's top-level per canonical directory, with the nearest `.git` entry seen when git was asked.
type Toplevels = HashMap<PathBuf, (Option<PathBuf>, Option<PathBuf>)>;
static TOPLEVELS: LazyLock<Mutex<Toplevels>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// [`git_toplevel`] of `dir`, asked again only when the nearest `.git` entry above `dir` changed.
fn remembered_toplevel(dir: &Path) -> Option<PathBuf> {
    let marker = nearest_git_entry(dir);
    let known = TOPLEVELS.lock().unwrap_or_else(|e| e.into_inner()).get(dir).cloned();
    if let Some((toplevel, seen)) = known
        && seen == marker
        && toplevel.as_ref().is_none_or(|t| t.is_dir())
    {
        return toplevel;
    }
    let toplevel = git_toplevel(dir);
    TOPLEVELS.lock().unwrap_or_else(|e| e.into_inner()).insert(dir.to_path_buf(), (toplevel.clone(), marker));
    toplevel
}

/// The nearest `dir/.git`, `dir/../.git`, … that exists (a repository's directory or a worktree's file).
fn nearest_git_entry(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().map(|d| d.join(".git")).find(|entry| entry.symlink_metadata().is_ok())
}

/// The canonical git top-level of `dir`, `None` outside git (or without a git binary).
fn git_toplevel(dir: &Path) -> Option<PathBuf> {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .args(["rev-parse", "--show-toplevel"])
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    for name in GIT_LOCATION_VARIABLES {
        command.env_remove(name);
    }
    let output = command.output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let top = text.trim_end_matches(['\n', '\r']);
    if top.is_empty() {
        return None;
    }
    Path::new(top).canonicalize().ok()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `git init` in `dir`, with no system config and a throwaway HOME.
    pub(crate) fn git_init(dir: &Path) {
        let home = tempfile::tempdir().unwrap();
        let status = Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", home.path())
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn check(cwd: Option<&str>, global: Option<bool>) -> Result<Scope, Error> {
        Scope::resolve(cwd, global)
    }

    #[test]
    fn neither_is_cwd_required() {
        assert_eq!(check(None, None).unwrap_err().as_code(), "CWD_REQUIRED");
        assert_eq!(
            check(None, Some(false)).unwrap_err().as_code(),
            "CWD_REQUIRED"
        );
    }

    #[test]
    fn both_is_a_conflict_that_echoes_cwd() {
        let err = check(Some("/tmp"), Some(true)).unwrap_err();
        assert_eq!(err.as_code(), "CWD_GLOBAL_CONFLICT");
        assert_eq!(err.body()["cwd"], "/tmp");
    }

    #[test]
    fn global_has_empty_project_id() {
        let scope = check(None, Some(true)).unwrap();
        assert_eq!(scope, Scope::Global);
        assert_eq!(scope.project_id(), "");
        assert!(scope.root().is_none());
    }

    #[test]
    fn relative_missing_and_file_cwds_are_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        for cwd in [
            "relative/path".to_owned(),
            String::new(),
            dir.path().join("missing").display().to_string(),
            file.display().to_string(),
        ] {
            let err = check(Some(&cwd), None).unwrap_err();
            assert_eq!(err.as_code(), "CWD_INVALID", "{cwd}");
            assert_eq!(err.body()["cwd"], cwd.as_str());
        }
    }

    #[test]
    fn a_subdirectory_of_a_repo_resolves_to_the_git_root() {
        let dir = tempfile::tempdir().unwrap();
        git_init(dir.path());
        let sub = dir.path().join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        let scope = check(Some(sub.to_str().unwrap()), None).unwrap();
        let root = dir.path().canonicalize().unwrap();
        assert_eq!(scope.root(), Some(root.as_path()));
        assert_eq!(scope.project_id(), project_id(&root));
        assert_eq!(scope.project_id().len(), 16);
        match &scope {
            Scope::Project { cwd, .. } => assert_eq!(cwd, &sub.canonicalize().unwrap()),
            Scope::Global => unreachable!(),
        }
        let at_root = check(Some(dir.path().to_str().unwrap()), None).unwrap();
        assert_eq!(at_root.project_id(), scope.project_id());
    }

    #[test]
    fn the_remembered_root_follows_repositories_that_appear_and_vanish() {
        let dir = tempfile::tempdir().unwrap();
        let outer = dir.path().canonicalize().unwrap();
        let inner = outer.join("inner");
        let sub = inner.join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        let root_of = |d: &Path| check(Some(d.to_str().unwrap()), None).unwrap().root().unwrap().to_path_buf();
        // Not in a repository (the temporary directory is outside any): its own project.
        if nearest_git_entry(&sub).is_none() {
            assert_eq!(root_of(&sub), sub);
        }
        git_init(&outer);
        assert_eq!(root_of(&sub), outer, "a repository above appears");
        git_init(&inner);
        assert_eq!(root_of(&sub), inner, "a nested repository appears");
        assert_eq!(root_of(&sub), inner, "asked again: the same answer");
        std::fs::remove_dir_all(inner.join(".git")).unwrap();
        assert_eq!(root_of(&sub), outer, "the nested repository goes away");
    }

    #[test]
    fn a_non_git_cwd_is_its_own_project() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let sa = check(Some(a.to_str().unwrap()), None).unwrap();
        let sb = check(Some(b.to_str().unwrap()), None).unwrap();
        assert_eq!(sa.root(), Some(a.canonicalize().unwrap().as_path()));
        assert_ne!(sa.project_id(), sb.project_id());
    }

    #[test]
    fn project_id_is_sha256_prefix() {
        // sha256("/") = 8a5edab282632443219e051e4ade2d1d5bbc671c781051bf1437897cbdfea0f1
        assert_eq!(project_id(Path::new("/")), "8a5edab282632443");
    }
}
