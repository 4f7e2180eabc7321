//! Where `list_skills` looks (§15.1), in order: the user-global skill roots, the project-local roots of every
//! directory from `cwd` up to the project root, then the project tree itself to depth 6.
//!
//! The tree walk does not read `.gitignore`; it skips only the fixed directory names of [`EXCLUDED_DIRS`]. Symbolic
//! links to directories are never followed, files over 256 KiB are not read, and the whole listing stops after
//! 20 000 files. A file reached from two roots is reported once, at its first root.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::{Skill, UserDirs, read_skill};
use crate::scope::Scope;

/// Directory names never entered.
pub(crate) const EXCLUDED_DIRS: [&str; 9] = [
    ".git",
    "node_modules",
    "dist",
    "build",
    ".next",
    ".turbo",
    ".nx",
    "coverage",
    ".cache",
];

/// How deep the skill roots are walked.
const ROOT_DEPTH: usize = 4;
/// How deep the project tree is walked.
const TREE_DEPTH: usize = 6;
/// Files looked at, over all roots, before the listing stops.
const MAX_FILES: usize = 20_000;

/// The skill folders of each project directory.
const PROJECT_ROOTS: [&str; 3] = [".claude/skills", ".agents/skills", ".opencode/skills"];

/// Every skill in the roots of `scope`, in discovery order.
pub(crate) fn skills(user: &UserDirs, scope: &Scope, content_scan: bool) -> Vec<Skill> {
    let mut walk = Walk::default();
    for dir in user_roots(user) {
        walk.root(&dir, ROOT_DEPTH);
    }
    if let Scope::Project { cwd, root, .. } = scope {
        for dir in project_dirs(cwd, root) {
            for sub in PROJECT_ROOTS {
                walk.root(&dir.join(sub), ROOT_DEPTH);
            }
        }
        if content_scan {
            walk.root(root, TREE_DEPTH);
        }
    }
    walk.found
}

/// The user-global roots: Claude, the shared `.agents`, Codex (`$CODEX_HOME`), OpenCode, Gemini.
pub(crate) fn user_roots(user: &UserDirs) -> Vec<PathBuf> {
    let home = user.home.as_deref();
    let codex = user
        .codex_home
        .clone()
        .or_else(|| home.map(|h| h.join(".codex")));
    [
        home.map(|h| h.join(".claude/skills")),
        home.map(|h| h.join(".agents/skills")),
        codex.map(|c| c.join("skills")),
        home.map(|h| h.join(".config/opencode/skills")),
        home.map(|h| h.join(".gemini/skills")),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// `cwd` and each of its parents up to and including `root` (just `cwd` when it is not inside `root`).
fn project_dirs(cwd: &Path, root: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut dir = Some(cwd);
    while let Some(current) = dir {
        dirs.push(current.to_owned());
        if current == root || !current.starts_with(root) {
            break;
        }
        dir = current.parent();
    }
    dirs
}

/// The state of one listing: what was found, what was seen, how many files were looked at.
#[derive(Default)]
struct Walk {
    found: Vec<Skill>,
    seen: HashSet<PathBuf>,
    files: usize,
}

impl Walk {
    /// Walks `dir` (following it if it is itself a link) down to `depth` levels.
    fn root(&mut self, dir: &Path, depth: usize) {
        if let Ok(canonical) = dir.canonicalize()
            && canonical.is_dir()
        {
            self.dir(&canonical, depth);
        }
    }

    fn dir(&mut self, dir: &Path, depth: usize) {
        if depth == 0 || self.files >= MAX_FILES {
            return;
        }
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            if self.files >= MAX_FILES {
                return;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                let name = entry.file_name();
                if !EXCLUDED_DIRS.iter().any(|x| name == *x) {
                    self.dir(&path, depth - 1);
                }
            } else if kind.is_file() || (kind.is_symlink() && path.is_file()) {
                self.files += 1;
                self.file(&path);
            }
        }
    }

    fn file(&mut self, path: &Path) {
        let Ok(canonical) = path.canonicalize() else {
            return;
        };
        if self.seen.contains(&canonical) {
            return;
        }
        if let Some(skill) = read_skill(&canonical) {
            self.seen.insert(canonical);
            self.found.push(skill);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(path: &Path, name: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(
            path,
            format!("---\nname: {name}\ndescription: does {name}\n---\nbody\n"),
        )
        .unwrap();
    }

    fn names(found: &[Skill]) -> Vec<&str> {
        found.iter().map(|s| s.name.as_str()).collect()
    }

    fn project(root: &Path, cwd: &Path) -> Scope {
        Scope::Project {
            cwd: cwd.canonicalize().unwrap(),
            root: root.canonicalize().unwrap(),
            project_id: "p".into(),
        }
    }

    #[test]
    fn roots_in_order_and_duplicates_once() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let codex = tmp.path().join("codex");
        skill(&home.join(".claude/skills/a/SKILL.md"), "claude");
        skill(&home.join(".agents/skills/a/SKILL.md"), "agents");
        skill(&codex.join("skills/a/SKILL.md"), "codex");
        skill(&home.join(".codex/skills/a/SKILL.md"), "ignored-codex");
        skill(&home.join(".config/opencode/skills/a/SKILL.md"), "opencode");
        skill(&home.join(".gemini/skills/a/SKILL.md"), "gemini");
        let root = tmp.path().join("proj");
        skill(&root.join(".claude/skills/r/SKILL.md"), "root-claude");
        skill(
            &root.join("sub/.opencode/skills/s/SKILL.md"),
            "sub-opencode",
        );
        skill(&root.join("docs/guide/deep/SKILL.md"), "tree");
        skill(&root.join("node_modules/pkg/SKILL.md"), "excluded");
        skill(&root.join("a/b/c/d/e/f/SKILL.md"), "too-deep");
        skill(&root.join("a/b/c/d/e/SKILL.md"), "deep-enough");

        let user = UserDirs {
            home: Some(home.clone()),
            codex_home: Some(codex),
        };
        let scope = project(&root, &root.join("sub"));
        let found = skills(&user, &scope, true);
        let in_roots = ["claude", "agents", "codex", "opencode", "gemini", "sub-opencode", "root-claude"];
        assert_eq!(names(&found), [&in_roots[..], &["deep-enough", "tree"]].concat());
        assert_eq!(names(&skills(&user, &scope, false)), in_roots);
        assert_eq!(names(&skills(&user, &Scope::Global, true)).len(), 5);

        let no_codex_home = UserDirs {
            home: Some(home),
            codex_home: None,
        };
        assert!(names(&skills(&no_codex_home, &Scope::Global, true)).contains(&"ignored-codex"));
    }

    #[cfg(unix)]
    #[test]
    fn linked_directories_are_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("proj");
        let elsewhere = tmp.path().join("elsewhere");
        skill(&elsewhere.join("x/SKILL.md"), "outside");
        fs::create_dir_all(&root).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("link")).unwrap();
        let found = skills(&UserDirs::default(), &project(&root, &root), true);
        assert!(found.is_empty(), "{found:?}");
    }
}
