//! Finding files by name anywhere in a project, cheaply on repeated calls.
//!
//! `.deepreview` files and anonymous DeepSchemas (`.deepschema.<file>.yml`) may sit in any directory of a project, and
//! the review tools and the quality gate need the current set on every call. [`TreeScan`] walks the project root:
//! it follows directory symlinks that lead to another place inside the project (never into a directory it is already
//! inside, and never out of the project: a link to `/` or to the home directory is not searched), skips tool and
//! vendor directories ([`SKIPPED_DIRS`], `*.egg-info`), every `.deepwork/tmp`, and whatever git ignores —
//! `.gitignore` files from the top of the repository down (also outside a git repository, for the ones inside the
//! root), `.git/info/exclude` and the user's global excludes file. Ignored *directories* and ignored *files* are both
//! left out. An entry with a wanted name is listed whatever it is — a directory, a FIFO, a link to a device or to
//! nowhere — so that reading it reports what is wrong instead of the file being passed over in silence.
//!
//! Ignore files are read as git reads them: regular files only (a symbolic link is not followed, as git 2.32 and later
//! do not), and at most [`MAX_DEFINITION_BYTES`]; a larger one is left out with a warning in the log.
//!
//! The scan remembers each directory's listing with the directory's modification time. A later scan stats every
//! known directory (and its `.gitignore`) and re-reads only the ones that changed: adding, removing or renaming an
//! entry changes its directory's time, and a changed `.gitignore` re-evaluates everything below it.
//!
//! [`Seen`] is the change detection shared by the caches built on this (directories here, parsed files in
//! `deepreview` and `deepschema`): modification time and size, and a guard against the "racy timestamp" problem — a
//! timestamp is only trusted once it is older than the file system's timestamp granularity, because a second change
//! within the same clock tick would otherwise go unnoticed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::confined::{self, MAX_DEFINITION_BYTES, normalize};

/// Directory names never searched (virtual environments, caches, version control).
pub(crate) const SKIPPED_DIRS: [&str; 10] = [
    ".git",
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".eggs",
];

/// Whether a directory entry called `name` inside a directory called `parent_name` is never searched.
pub(crate) fn is_skipped_dir(parent_name: &str, name: &str) -> bool {
    SKIPPED_DIRS.contains(&name) || name.ends_with(".egg-info") || (parent_name == ".deepwork" && name == "tmp")
}

/// Modification time and size of a file or directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    modified: SystemTime,
    len: u64,
}

/// What one `stat` of a path showed, and whether that is enough to notice the next change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seen {
    /// `None` when the path did not exist (or could not be read).
    stamp: Option<Stamp>,
    /// The timestamp was old enough that any later change gets a different one.
    settled: bool,
}

impl Seen {
    /// Stats `path` (following symlinks).
    pub(crate) fn of(path: &Path) -> Seen {
        let now = SystemTime::now();
        let stamp =
            std::fs::metadata(path).ok().and_then(|m| Some(Stamp { modified: m.modified().ok()?, len: m.len() }));
        let settled = match stamp {
            None => true,
            Some(stamp) => match now.duration_since(stamp.modified) {
                Ok(age) => age >= racy_window(stamp.modified),
                // A timestamp in the future: not trustworthy until the clock has passed it.
                Err(_) => false,
            },
        };
        Seen { stamp, settled }
    }

    /// Whether the path still looks exactly as it did when `self` was taken and nothing can have changed unseen.
    pub(crate) fn unchanged(&self, now: &Seen) -> bool {
        self.settled && self.stamp == now.stamp
    }

    /// Whether the path existed.
    pub(crate) fn exists(&self) -> bool {
        self.stamp.is_some()
    }
}

/// How old a timestamp must be before it is trusted: file systems with whole-second timestamps (FAT, HFS+, ext3…)
/// get two seconds, the others 100 ms (Linux stamps files from a clock that advances in ticks of up to 10 ms).
fn racy_window(modified: SystemTime) -> Duration {
    let whole_second = modified.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.subsec_nanos() == 0).unwrap_or(true);
    if whole_second { Duration::from_secs(2) } else { Duration::from_millis(100) }
}

/// One directory as last read.
#[derive(Debug)]
struct Listing {
    /// The directory itself.
    seen: Seen,
    /// Its `.gitignore`.
    gitignore_seen: Seen,
    /// The rules of its `.gitignore`, if it has one.
    gitignore: Option<Arc<Gitignore>>,
    /// Searched subdirectories, sorted by name, with the real path of each (for the symlink loop guard).
    subdirs: Vec<(PathBuf, PathBuf)>,
    /// Wanted files in it, sorted by name.
    files: Vec<PathBuf>,
}

/// Ignore rules that come from outside the scanned tree: the global excludes file, `.git/info/exclude` and the
/// `.gitignore` files of the root's ancestors up to the top of the repository.
#[derive(Debug, Default)]
struct OuterRules {
    /// The files they were built from, as seen then.
    sources: Vec<(PathBuf, Seen)>,
    /// Lowest priority first.
    rules: Vec<Arc<Gitignore>>,
    /// Whether they were built for the current root.
    built: bool,
}

/// A remembered walk of one project root that finds files whose name passes a test.
#[derive(Debug)]
pub(crate) struct TreeScan {
    wanted: fn(&str) -> bool,
    root: Option<PathBuf>,
    outer: OuterRules,
    dirs: HashMap<PathBuf, Listing>,
    /// How many directory listings were read so far (what the cache saves).
    reads: u64,
}

impl TreeScan {
    /// A scan for files whose name satisfies `wanted`.
    pub(crate) fn new(wanted: fn(&str) -> bool) -> TreeScan {
        TreeScan { wanted, root: None, outer: OuterRules::default(), dirs: HashMap::new(), reads: 0 }
    }

    /// Every wanted file under `root`, in walk order (directories sorted by name, a directory's files before its
    /// subdirectories). Only directories that changed since the last scan are read again.
    pub(crate) fn scan(&mut self, root: &Path) -> Vec<PathBuf> {
        if self.root.as_deref() != Some(root) {
            self.root = Some(root.to_path_buf());
            self.outer = OuterRules::default();
            self.dirs.clear();
        }
        let (paths, git_top) = outer_sources(root);
        let sources: Vec<(PathBuf, Seen)> = paths
            .into_iter()
            .map(|p| {
                let seen = Seen::of(&p);
                (p, seen)
            })
            .collect();
        let outer_changed = !self.outer.built
            || sources.len() != self.outer.sources.len()
            || sources.iter().zip(&self.outer.sources).any(|((p, now), (q, before))| p != q || !before.unchanged(now));
        if outer_changed {
            self.outer = build_outer(sources, git_top.as_deref());
        }
        let mut old = std::mem::take(&mut self.dirs);
        let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let mut walk = Walk {
            wanted: self.wanted,
            old: &mut old,
            new: &mut self.dirs,
            rules: self.outer.rules.clone(),
            chain: Vec::new(),
            real_root: real_root.clone(),
            found: Vec::new(),
            reads: 0,
        };
        walk.visit(root, real_root, outer_changed);
        self.reads += walk.reads;
        walk.found
    }
}

/// The state of one scan in progress.
struct Walk<'a> {
    wanted: fn(&str) -> bool,
    old: &'a mut HashMap<PathBuf, Listing>,
    new: &'a mut HashMap<PathBuf, Listing>,
    /// Ignore rules in force for the current directory, lowest priority first.
    rules: Vec<Arc<Gitignore>>,
    /// Real paths of the directories being visited, outermost first.
    chain: Vec<PathBuf>,
    /// The real path of the root: links leading elsewhere are not followed.
    real_root: PathBuf,
    found: Vec<PathBuf>,
    reads: u64,
}

impl Walk<'_> {
    fn visit(&mut self, dir: &Path, real: PathBuf, rules_changed: bool) {
        let seen = Seen::of(dir);
        if !seen.exists() {
            return;
        }
        let gitignore_seen = Seen::of(&dir.join(".gitignore"));
        let previous = self.old.remove(dir);
        let gitignore_changed = previous.as_ref().is_none_or(|p| !p.gitignore_seen.unchanged(&gitignore_seen));
        let listing = match previous {
            Some(listing) if !rules_changed && !gitignore_changed && listing.seen.unchanged(&seen) => listing,
            previous => {
                let gitignore = match (&previous, gitignore_changed) {
                    (Some(p), false) => p.gitignore.clone(),
                    _ if gitignore_seen.exists() => ignore_file(dir, &dir.join(".gitignore")).map(Arc::new),
                    _ => None,
                };
                self.read(dir, &real, seen, gitignore_seen, gitignore)
            }
        };
        self.found.extend(listing.files.iter().cloned());
        let subdirs = listing.subdirs.clone();
        let pushed = listing.gitignore.clone().map(|g| self.rules.push(g)).is_some();
        self.new.insert(dir.to_path_buf(), listing);
        self.chain.push(real);
        for (sub, sub_real) in subdirs {
            self.visit(&sub, sub_real, rules_changed || gitignore_changed);
        }
        self.chain.pop();
        if pushed {
            self.rules.pop();
        }
    }

    /// Reads a directory: its searched subdirectories and its wanted files.
    fn read(
        &mut self,
        dir: &Path,
        real: &Path,
        seen: Seen,
        gitignore_seen: Seen,
        gitignore: Option<Arc<Gitignore>>,
    ) -> Listing {
        self.reads += 1;
        let dir_name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let mut rules = self.rules.clone();
        rules.extend(gitignore.clone());
        let mut subdirs = Vec::new();
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let Ok(name) = entry.file_name().into_string() else { continue };
            let path = entry.path();
            let Ok(mut kind) = entry.file_type() else { continue };
            if (self.wanted)(&name) {
                // Whatever it is: reading it says what is wrong with it.
                let is_dir = std::fs::metadata(&path).is_ok_and(|meta| meta.is_dir());
                if !ignored(&rules, &path, is_dir) {
                    files.push(path);
                }
                continue;
            }
            let symlink = kind.is_symlink();
            if symlink {
                match std::fs::metadata(&path) {
                    Ok(meta) => kind = meta.file_type(),
                    Err(_) => continue, // a dangling link
                }
            }
            if kind.is_dir() {
                if is_skipped_dir(dir_name, &name) || ignored(&rules, &path, true) {
                    continue;
                }
                let sub_real = if symlink {
                    match std::fs::canonicalize(&path) {
                        Ok(target) => target,
                        Err(_) => continue,
                    }
                } else {
                    real.join(&name)
                };
                // A link out of the project is not searched; a link to a directory we are inside would loop forever.
                if !sub_real.starts_with(&self.real_root) || sub_real == real || self.chain.contains(&sub_real) {
                    continue;
                }
                subdirs.push((path, sub_real));
            }
        }
        subdirs.sort();
        files.sort();
        Listing { seen, gitignore_seen, gitignore, subdirs, files }
    }
}

/// Whether the deepest rule that has an opinion about `path` ignores it.
fn ignored(rules: &[Arc<Gitignore>], path: &Path, is_dir: bool) -> bool {
    for rule in rules.iter().rev() {
        match rule.matched(path, is_dir) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => {}
        }
    }
    false
}

/// The ignore files outside the tree that apply to `root`, lowest priority first, and the top of its repository.
fn outer_sources(root: &Path) -> (Vec<PathBuf>, Option<PathBuf>) {
    let Some(top) = root.ancestors().find(|dir| dir.join(".git").exists()) else {
        return (Vec::new(), None);
    };
    let mut sources = Vec::new();
    if let Some(git_dir) = git_common_dir(&top.join(".git")) {
        sources.push(git_dir.join("info").join("exclude"));
    }
    // Ancestors strictly above the root, from the top of the repository down.
    let mut between: Vec<&Path> = root.ancestors().skip(1).take_while(|dir| dir.starts_with(top)).collect();
    between.reverse();
    sources.extend(between.into_iter().map(|dir| dir.join(".gitignore")));
    (sources, Some(top.to_path_buf()))
}

/// Builds the outer rules from their files (stat before read), plus the global excludes file inside a repository.
fn build_outer(sources: Vec<(PathBuf, Seen)>, git_top: Option<&Path>) -> OuterRules {
    let mut rules = Vec::new();
    if let Some(top) = git_top {
        let (global, _) = GitignoreBuilder::new(top).build_global();
        if !global.is_empty() {
            rules.push(Arc::new(global));
        }
    }
    for (path, now) in &sources {
        if now.exists() {
            // `info/exclude` patterns are relative to the top of the work tree, not to the `.git/info` folder.
            let base = if path.ends_with("info/exclude") {
                git_top.unwrap_or(Path::new("/"))
            } else {
                path.parent().unwrap_or(Path::new("/"))
            };
            if let Some(rule) = ignore_file(base, path).filter(|rule| !rule.is_empty()) {
                rules.push(Arc::new(rule));
            }
        }
    }
    OuterRules { sources, rules, built: true }
}

/// The rules of the ignore file `file`, with patterns relative to `base`; `None` when it is not a regular file (a
/// symbolic link is not followed) or is too large. Lines as git reads them: a BOM at the start and a CR before each
/// newline are dropped, lines that are not UTF-8 or not valid patterns are skipped.
fn ignore_file(base: &Path, file: &Path) -> Option<Gitignore> {
    if !std::fs::symlink_metadata(file).is_ok_and(|meta| meta.is_file()) {
        return None;
    }
    let bytes = match confined::read_bytes(file, None, Some(MAX_DEFINITION_BYTES)) {
        Ok(bytes) => bytes,
        Err(err) => {
            tracing::warn!("ignore file {} is not used: {err}", file.display());
            return None;
        }
    };
    let mut builder = GitignoreBuilder::new(base);
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let Ok(line) = std::str::from_utf8(line.strip_suffix(b"\r").unwrap_or(line)) else { continue };
        let line = if index == 0 { line.trim_start_matches('\u{feff}') } else { line };
        // A line that is not a valid pattern is skipped, as git does.
        let _ = builder.add_line(Some(file.to_path_buf()), line);
    }
    builder.build().ok()
}

/// The git directory shared by all work trees, for a `.git` entry (a directory, or a file `gitdir: <path>`).
fn git_common_dir(dot_git: &Path) -> Option<PathBuf> {
    if dot_git.is_dir() {
        return Some(dot_git.to_path_buf());
    }
    let text = confined::read_text(dot_git, None, Some(MAX_DEFINITION_BYTES)).ok()?;
    let gitdir = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let gitdir = dot_git.parent()?.join(gitdir);
    match confined::read_text(&gitdir.join("commondir"), None, Some(MAX_DEFINITION_BYTES)) {
        Ok(common) => Some(normalize(&gitdir.join(common.trim()))),
        Err(_) => Some(gitdir),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Sets the modification time of `path` and everything below it to a minute ago, so caches trust it.
    pub(crate) fn age(path: &Path) {
        let past = SystemTime::now() - Duration::from_secs(60);
        if path.is_dir() && !path.is_symlink() {
            for entry in std::fs::read_dir(path).unwrap() {
                age(&entry.unwrap().path());
            }
        }
        if !path.is_symlink() {
            std::fs::File::open(path).unwrap().set_modified(past).unwrap();
        }
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn names(root: &Path, found: &[PathBuf]) -> Vec<String> {
        found.iter().map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned()).collect()
    }

    fn wanted(name: &str) -> bool {
        name == "want"
    }

    #[test]
    fn seen_trusts_only_old_timestamps() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let fresh = Seen::of(&file);
        assert!(fresh.exists() && !fresh.unchanged(&Seen::of(&file)));
        age(&file);
        let old = Seen::of(&file);
        assert!(old.unchanged(&Seen::of(&file)));
        std::fs::write(&file, "xy").unwrap();
        assert!(!old.unchanged(&Seen::of(&file)));
        let missing = Seen::of(&dir.path().join("nope"));
        assert!(!missing.exists() && missing.unchanged(&Seen::of(&dir.path().join("nope"))));
    }

    #[test]
    fn skips_tool_dirs_deepwork_tmp_and_gitignored_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for path in [
            "want",
            "a/want",
            "a/b/want",
            "node_modules/x/want",
            ".git/want",
            "pkg.egg-info/want",
            ".deepwork/tmp/want",
            ".deepwork/jobs/j/want",
            "build/want",
            "keep/want",
            "logs/want",
            "logs/important/want",
            "other",
        ] {
            write(&root.join(path), "");
        }
        write(&root.join(".gitignore"), "build/\n/logs/*\n!/logs/important/\n");
        write(&root.join("keep/.gitignore"), "want\n");
        let mut scan = TreeScan::new(wanted);
        assert_eq!(
            names(root, &scan.scan(root)),
            ["want", ".deepwork/jobs/j/want", "a/want", "a/b/want", "logs/important/want"]
        );
    }

    #[test]
    fn applies_the_gitignore_files_of_the_repository_above_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        std::fs::create_dir_all(repo.join(".git/info")).unwrap();
        write(&repo.join(".git/info/exclude"), "excluded/\n");
        write(&repo.join(".gitignore"), "generated/\n");
        let root = repo.join("project");
        for path in ["want", "generated/want", "excluded/want", "src/want"] {
            write(&root.join(path), "");
        }
        let mut scan = TreeScan::new(wanted);
        assert_eq!(names(&root, &scan.scan(&root)), ["want", "src/want"]);
    }

    #[test]
    fn follows_directory_links_inside_the_root_only_and_without_looping() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        write(&root.join("a/want"), "");
        write(&root.join("b/c/want"), "");
        write(&dir.path().join("outside/want"), "");
        std::os::unix::fs::symlink(&root, root.join("a/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("b/c"), root.join("inner")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside"), root.join("linked")).unwrap();
        std::os::unix::fs::symlink("/", root.join("everything")).unwrap();
        let mut scan = TreeScan::new(wanted);
        assert_eq!(names(&root, &scan.scan(&root)), ["a/want", "b/c/want", "inner/want"]);
    }

    #[test]
    fn lists_wanted_names_whatever_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/want/below")).unwrap();
        write(&root.join("a/want/below/want"), "");
        std::fs::create_dir(root.join("b")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("b/want")).unwrap();
        std::fs::create_dir(root.join("c")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("c/want")).unwrap();
        let mut scan = TreeScan::new(wanted);
        assert_eq!(names(root, &scan.scan(root)), ["a/want", "b/want", "c/want"]);
    }

    #[test]
    fn ignore_files_are_read_like_git_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for path in ["a/want", "a/skip/want", "b/want", "c/want", "d/want"] {
            write(&root.join(path), "");
        }
        write(&root.join("a/.gitignore"), "\u{feff}skip/\r\nnot-here\r\n");
        // A link is not followed, as git does not follow it; neither is a device.
        write(&dir.path().join("rules"), "want\n");
        std::os::unix::fs::symlink(root.join("rules"), root.join("b/.gitignore")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("c/.gitignore")).unwrap();
        // Too large: not used.
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::File::create(root.join("d/.gitignore")).unwrap().set_len(MAX_DEFINITION_BYTES + 1).unwrap();
        let mut scan = TreeScan::new(wanted);
        assert_eq!(names(root, &scan.scan(root)), ["a/want", "b/want", "c/want", "d/want"]);
    }

    #[test]
    fn rescans_only_what_changed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join("a/want"), "");
        write(&root.join("b/c/x"), "");
        age(root);
        let mut scan = TreeScan::new(wanted);
        assert_eq!(names(root, &scan.scan(root)), ["a/want"]);
        assert_eq!(scan.reads, 4);
        // Nothing changed: no directory is read again.
        assert_eq!(names(root, &scan.scan(root)), ["a/want"]);
        assert_eq!(scan.reads, 4);
        // A new file changes its directory's time.
        write(&root.join("b/c/want"), "");
        assert_eq!(names(root, &scan.scan(root)), ["a/want", "b/c/want"]);
        assert_eq!(scan.reads, 5);
        // A new .gitignore re-evaluates everything below it.
        write(&root.join("b/.gitignore"), "c/\n");
        assert_eq!(names(root, &scan.scan(root)), ["a/want"]);
        std::fs::remove_file(root.join("b/.gitignore")).unwrap();
        std::fs::remove_dir_all(root.join("a")).unwrap();
        assert_eq!(names(root, &scan.scan(root)), ["b/c/want"]);
    }
}
