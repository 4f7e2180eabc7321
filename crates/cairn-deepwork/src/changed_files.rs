//! Which files changed on this branch (spec §9.3) and which directory review prompts are relative to (spec §9.8
//! "ref-root"), found by running the `git` binary.
//!
//! Changed files are the union of what differs from the merge-base with the default branch (committed on the branch
//! plus unstaged), what is staged, and untracked files that are not ignored — never deleted files. Unlike DeepWork
//! 0.14.0, whose paths were relative to the repository root (so nothing matched when the project root was a
//! subdirectory, spec §17 #397), every path here is relative to the project root and files outside it are dropped;
//! linked worktrees and repositories without commits work too.
//!
//! git runs with its working directory set to the project root and without the `GIT_DIR`-style variables a calling
//! git hook may have exported, so the root alone decides the repository.
//!
//! Finding the base (is there a HEAD, which default branch, their merge-base) takes three git processes in a row, yet
//! its answer only changes when a ref moves. It is remembered per root with a fingerprint of the ref files it rests on
//! (`HEAD`'s content; size, modification time and inode of the loose refs involved and of `packed-refs`), so a call
//! whose refs did not move runs only the three listings, side by side. Repositories with the reftable backend are not
//! fingerprinted and always resolve afresh.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use crate::confined::{self, MAX_DEFINITION_BYTES};
use crate::process::{Finished, run_with_timeout};

/// Branches tried, in order, when `origin/HEAD` does not name the default branch.
const DEFAULT_BRANCH_CANDIDATES: [&str; 4] = ["origin/main", "origin/master", "main", "master"];

/// `origin/main` → `refs/remotes/origin/main`, `main` → `refs/heads/main`.
fn full_ref(short: &str) -> String {
    if short.starts_with("origin/") { format!("refs/remotes/{short}") } else { format!("refs/heads/{short}") }
}

/// How long `reference_root` waits for git.
const REFERENCE_ROOT_TIMEOUT: Duration = Duration::from_secs(5);

/// Variables that would point git at another repository, index or work tree than the one containing the root.
const LOCATION_VARIABLES: [&str; 6] =
    ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_NAMESPACE"];

/// `git` run in `dir` with stdin closed and without the variables that could point it at another repository.
pub(crate) fn git_command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command.current_dir(dir).stdin(Stdio::null());
    for name in LOCATION_VARIABLES {
        command.env_remove(name);
    }
    command
}

/// Changed files relative to the project root `root` (which may be a subdirectory of the repository or a linked
/// worktree), sorted (byte order), de-duplicated, deleted files excluded, files outside `root` and under
/// `.deepwork/tmp/` dropped.
/// `base_ref`: use this ref instead of detecting the default branch (still merge-based).
///
/// In a repository without commits the result is the staged and untracked files. Outside a repository (or without a
/// `git` binary) the error starts with `git diff failed:`.
pub fn changed_files(root: &Path, base_ref: Option<&str>) -> Result<Vec<String>, String> {
    Git::new(root).changed_files(base_ref)
}

/// The directory review prompts are relative to (spec §9.8 "ref-root"): the parent P of
/// `git rev-parse --path-format=absolute --git-common-dir` when P != root and root lies inside P, else root
/// (also when git fails or takes longer than 5 s).
///
/// When `root` reaches P through a symbolic link, the result is the matching ancestor of `root` as written, so paths
/// built on `root` can still be made relative to it.
pub fn reference_root(root: &Path) -> PathBuf {
    Git::new(root).reference_root()
}

/// Where a root's repository keeps its metadata, as git reported it (absolute paths).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Location {
    /// The work tree's own git directory (`.git`, or `.git/worktrees/<name>` of a linked worktree).
    git_dir: PathBuf,
    /// The directory shared by all worktrees (refs, objects).
    common_dir: PathBuf,
}

/// The resolved base of one root and what it was resolved from.
#[derive(Debug, Clone)]
struct Remembered {
    location: Location,
    /// `None` when the refs cannot be fingerprinted (reftable): the base is then never reused.
    fingerprint: Option<Vec<u8>>,
    /// The merge-base to diff against; `None` in a repository without commits.
    merge_base: Option<String>,
}

/// The last resolution per project root (and git environment, which tests vary).
static REMEMBERED: LazyLock<Mutex<HashMap<(PathBuf, Vec<(OsString, OsString)>), Remembered>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

impl Location {
    /// The bytes that change whenever a ref the default base depends on moves, or `None` for the reftable backend.
    fn fingerprint(&self) -> Option<Vec<u8>> {
        if self.common_dir.join("reftable").exists() {
            return None;
        }
        let head = confined::read_bytes(&self.git_dir.join("HEAD"), None, Some(MAX_DEFINITION_BYTES)).ok()?;
        let mut fingerprint = head.clone();
        let mut files = vec![self.common_dir.join("packed-refs"), self.common_dir.join("refs/remotes/origin/HEAD")];
        if let Some(target) = head.strip_prefix(b"ref: ") {
            files.push(self.common_dir.join(String::from_utf8_lossy(target).trim()));
        }
        files.extend(DEFAULT_BRANCH_CANDIDATES.iter().map(|c| self.common_dir.join(full_ref(c))));
        // origin/HEAD may name a branch outside the candidates: its loose file counts too.
        let origin_head_file = self.common_dir.join("refs/remotes/origin/HEAD");
        if let Ok(origin_head) = confined::read_text(&origin_head_file, None, Some(MAX_DEFINITION_BYTES))
            && let Some(target) = origin_head.strip_prefix("ref: ")
        {
            files.push(self.common_dir.join(target.trim()));
        }
        for file in files {
            fingerprint.push(0);
            if let Ok(meta) = std::fs::metadata(&file) {
                use std::os::unix::fs::MetadataExt;
                for n in [meta.len() as i64, meta.mtime(), meta.mtime_nsec(), meta.ino() as i64] {
                    fingerprint.extend_from_slice(&n.to_le_bytes());
                }
            }
        }
        Some(fingerprint)
    }
}

/// How to run git for one project root.
struct Git {
    root: PathBuf,
    /// Extra environment (tests use it to isolate git from the user's configuration).
    env: Vec<(OsString, OsString)>,
}

impl Git {
    fn new(root: &Path) -> Git {
        Git { root: root.to_path_buf(), env: Vec::new() }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = git_command(&self.root);
        command.args(args);
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }

    /// Runs git to completion; `Err` only when it could not be started.
    fn output(&self, args: &[&str]) -> Result<Output, String> {
        self.command(args).output().map_err(|e| spawn_error(&e))
    }

    /// The ref to compare against: `origin/HEAD`'s target, else the first default-branch candidate that exists, else
    /// `HEAD`.
    fn default_base(&self) -> String {
        // One process: which candidates exist, and where origin/HEAD points.
        let candidates: Vec<String> = DEFAULT_BRANCH_CANDIDATES.iter().map(|c| full_ref(c)).collect();
        let mut args = vec!["for-each-ref", "--format=%(refname) %(symref)", "refs/remotes/origin/HEAD"];
        args.extend(candidates.iter().map(String::as_str));
        let listing = match self.output(&args) {
            Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
            _ => String::new(),
        };
        let mut existing = Vec::new();
        let mut origin_head = None;
        for line in listing.lines() {
            let (name, target) = line.split_once(' ').unwrap_or((line, ""));
            if name == "refs/remotes/origin/HEAD" {
                origin_head = Some(target.to_owned()).filter(|t| !t.is_empty());
            } else {
                existing.push(name.to_owned());
            }
        }
        // origin/HEAD's target may be a branch outside the candidates (e.g. origin/trunk): check that one too.
        let origin_head = origin_head.filter(|target| {
            existing.contains(target)
                || self.output(&["rev-parse", "--verify", "--quiet", target]).is_ok_and(|o| o.status.success())
        });
        origin_head
            .iter()
            .chain(candidates.iter().filter(|c| existing.contains(c)))
            .next()
            .map(|r| r.strip_prefix("refs/remotes/").or_else(|| r.strip_prefix("refs/heads/")).unwrap_or(r).to_owned())
            .unwrap_or_else(|| "HEAD".to_owned())
    }

    fn changed_files(&self, base_ref: Option<&str>) -> Result<Vec<String>, String> {
        if let Some(base) = base_ref
            && (base.is_empty() || base.starts_with('-'))
        {
            return Err(format!(
                "Invalid base ref '{base}': pass a branch, tag or commit name (it cannot be empty or start with '-')."
            ));
        }
        let merge_base = match base_ref {
            Some(base) => {
                let (_, has_head) = self.require_work_tree()?;
                if has_head { Some(self.merge_base(base)?) } else { None }
            }
            None => self.default_merge_base()?,
        };
        let diff = ["diff", "--name-only", "--diff-filter=ACMR", "-z", "--relative", "--no-color"];
        // The three listings are independent: run them side by side (each git process costs milliseconds).
        let (committed, staged, untracked) = std::thread::scope(|scope| {
            let committed = scope.spawn(|| match &merge_base {
                Some(base) => {
                    let args: Vec<&str> = diff.into_iter().chain([base.as_str(), "--"]).collect();
                    self.list("git diff", &args)
                }
                None => Ok(Vec::new()),
            });
            let staged = scope.spawn(|| {
                let args: Vec<&str> = diff.into_iter().chain(["--cached", "--"]).collect();
                self.list("git diff", &args)
            });
            // Run in the root, `ls-files` lists only files below it, relative to it.
            let untracked = self.list("git ls-files", &["ls-files", "--others", "--exclude-standard", "-z"]);
            let join = |handle: std::thread::ScopedJoinHandle<'_, Result<Vec<String>, String>>| {
                handle.join().unwrap_or_else(|_| Err("git diff failed: the listing thread panicked".to_owned()))
            };
            (join(committed), join(staged), untracked)
        });
        let mut files = BTreeSet::new();
        files.extend(committed?);
        files.extend(staged?);
        files.extend(untracked?);
        // cairn's own scratch folder (sessions, status, review instructions) is never a change to review.
        Ok(files.into_iter().filter(|f| !f.starts_with(".deepwork/tmp/")).collect())
    }

    /// The merge-base with the default branch (`None` without a commit): remembered while the refs stay put.
    fn default_merge_base(&self) -> Result<Option<String>, String> {
        let key = (self.root.clone(), self.env.clone());
        let remembered = REMEMBERED.lock().unwrap_or_else(|e| e.into_inner()).get(&key).cloned();
        if let Some(remembered) = remembered
            && remembered.location.git_dir.is_dir()
            && let Some(fingerprint) = remembered.location.fingerprint()
            && remembered.fingerprint.as_ref() == Some(&fingerprint)
        {
            return Ok(remembered.merge_base);
        }
        let (location, has_head) = self.require_work_tree()?;
        // Fingerprint before resolving: a ref moving in between makes the next call resolve again.
        let fingerprint = location.fingerprint();
        let merge_base = if has_head {
            let base = self.default_base();
            Some(if base == "HEAD" { base } else { self.merge_base(&base)? })
        } else {
            None
        };
        let remembered = Remembered { location, fingerprint, merge_base: merge_base.clone() };
        REMEMBERED.lock().unwrap_or_else(|e| e.into_inner()).insert(key, remembered);
        Ok(merge_base)
    }

    /// Where the repository is and whether HEAD exists (a first commit was made); fails with `git diff failed: …`
    /// unless the root is inside a git work tree (outside one, `git diff` would fall back to its `--no-index` mode
    /// and complain about options instead).
    fn require_work_tree(&self) -> Result<(Location, bool), String> {
        // One process answers it all: `true` when inside a work tree, the two directories, then HEAD's id when there
        // is a commit.
        let out = self
            .output(&[
                "rev-parse",
                "--is-inside-work-tree",
                "--absolute-git-dir",
                "--path-format=absolute",
                "--git-common-dir",
                "--verify",
                "--quiet",
                "HEAD",
            ])
            .map_err(|e| format!("git diff failed: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let mut lines = stdout.lines();
        if lines.next() == Some("true")
            && let (Some(git_dir), Some(common_dir)) = (lines.next(), lines.next())
        {
            let location = Location { git_dir: git_dir.into(), common_dir: common_dir.into() };
            return Ok((location, out.status.success()));
        }
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        let reason = if stderr.is_empty() { "not inside a git work tree".to_owned() } else { stderr };
        Err(format!(
            "git diff failed: {reason} (the project root {} must be inside a git work tree to find changed files; \
             run `git init` there or pass the files explicitly)",
            self.root.display()
        ))
    }

    fn merge_base(&self, base: &str) -> Result<String, String> {
        let out = self
            .output(&["merge-base", "HEAD", base])
            .map_err(|e| format!("Failed to find merge-base with '{base}': {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "Failed to find merge-base with '{base}': {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Runs a git command printing NUL-separated paths; directory entries (a nested repository or worktree shows up
    /// as `name/` among untracked files) are not files and are left out.
    fn list(&self, what: &str, args: &[&str]) -> Result<Vec<String>, String> {
        let out = self.output(args).map_err(|e| format!("{what} failed: {e}"))?;
        if !out.status.success() {
            return Err(format!("{what} failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        Ok(out
            .stdout
            .split(|&b| b == 0)
            .filter(|entry| !entry.is_empty() && !entry.ends_with(b"/"))
            .map(|entry| String::from_utf8_lossy(entry).into_owned())
            .collect())
    }

    fn reference_root(&self) -> PathBuf {
        let root = self.root.clone();
        let key = (self.root.clone(), self.env.clone());
        let known = REMEMBERED.lock().unwrap_or_else(|e| e.into_inner()).get(&key).map(|r| r.location.clone());
        let common_dir = match known {
            Some(location) if location.common_dir.is_dir() => location.common_dir,
            _ => match self
                .stdout_within(&["rev-parse", "--path-format=absolute", "--git-common-dir"], REFERENCE_ROOT_TIMEOUT)
            {
                Some(out) => PathBuf::from(out.trim_end_matches(['\n', '\r'])),
                None => return root,
            },
        };
        let Some(parent) = common_dir.parent().filter(|p| p.is_absolute()) else {
            return root;
        };
        // git prints resolved paths; compare against the resolved root.
        let real_root = root.canonicalize().unwrap_or_else(|_| root.clone());
        if real_root == parent || !real_root.starts_with(parent) {
            return root;
        }
        // Prefer the ancestor of `root` as written that is the same directory as P.
        let depth = real_root.strip_prefix(parent).map_or(0, |rest| rest.components().count());
        let plain =
            root.components().all(|c| matches!(c, Component::Normal(_) | Component::RootDir | Component::Prefix(_)));
        match root.ancestors().nth(depth) {
            Some(ancestor) if plain && ancestor.canonicalize().is_ok_and(|real| real == parent) => {
                ancestor.to_path_buf()
            }
            _ => parent.to_path_buf(),
        }
    }

    /// Stdout of a successful git run that finishes within `timeout` (killed otherwise).
    fn stdout_within(&self, args: &[&str], timeout: Duration) -> Option<String> {
        match run_with_timeout(self.command(args), timeout) {
            Finished::Exited(output) if output.status.success() => String::from_utf8(output.stdout).ok(),
            _ => None,
        }
    }
}

fn spawn_error(error: &std::io::Error) -> String {
    if error.kind() == std::io::ErrorKind::NotFound {
        "could not run `git`: it is not installed or not on PATH; install git or fix PATH.".to_owned()
    } else {
        format!("could not run `git`: {error}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A temporary directory with git isolated from the user's and system configuration.
    struct Sandbox {
        dir: tempfile::TempDir,
    }

    impl Sandbox {
        fn new() -> Sandbox {
            let dir = tempfile::tempdir().expect("tempdir");
            fs::create_dir_all(dir.path().join("home")).expect("home");
            Sandbox { dir }
        }

        fn path(&self) -> PathBuf {
            self.dir.path().canonicalize().expect("canonical tempdir")
        }

        fn env(&self) -> Vec<(OsString, OsString)> {
            let home = self.path().join("home");
            let mut env: Vec<(OsString, OsString)> = [
                ("GIT_CONFIG_NOSYSTEM", "1"),
                ("GIT_AUTHOR_NAME", "Test"),
                ("GIT_AUTHOR_EMAIL", "test@example.com"),
                ("GIT_COMMITTER_NAME", "Test"),
                ("GIT_COMMITTER_EMAIL", "test@example.com"),
                ("GIT_TERMINAL_PROMPT", "0"),
            ]
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
            env.push(("HOME".into(), home.clone().into()));
            env.push(("XDG_CONFIG_HOME".into(), home.join(".config").into()));
            env.push(("GIT_CONFIG_GLOBAL".into(), home.join(".gitconfig").into()));
            // Never find a repository above the sandbox (the test may run inside a checkout).
            env.push(("GIT_CEILING_DIRECTORIES".into(), self.path().into()));
            env
        }

        fn git_at(&self, root: &Path) -> Git {
            Git { root: root.to_path_buf(), env: self.env() }
        }

        /// Runs git in `cwd` and returns stdout; panics with stderr on failure.
        fn git(&self, cwd: &Path, args: &[&str]) -> String {
            let out = self.git_at(cwd).output(args).expect("git runs");
            assert!(out.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stdout).into_owned()
        }

        fn changed(&self, root: &Path, base_ref: Option<&str>) -> Vec<String> {
            self.git_at(root).changed_files(base_ref).expect("changed files")
        }

        /// A repository at `<sandbox>/<name>` on branch `main` with one commit.
        fn repo(&self, name: &str, files: &[&str]) -> PathBuf {
            let repo = self.path().join(name);
            fs::create_dir_all(&repo).expect("mkdir");
            self.git(&repo, &["init", "-q", "-b", "main"]);
            write(&repo, files);
            self.git(&repo, &["add", "-A"]);
            self.git(&repo, &["commit", "-q", "--allow-empty", "-m", "initial"]);
            repo
        }
    }

    fn write(dir: &Path, files: &[&str]) {
        for file in files {
            let path = dir.join(file);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(&path, format!("{file}\n")).expect("write");
        }
    }

    fn append(path: &Path) {
        let mut text = fs::read_to_string(path).expect("read");
        text.push_str("more\n");
        fs::write(path, text).expect("write");
    }

    #[test]
    fn branch_changes_staged_unstaged_untracked_minus_ignored_and_deleted() {
        let sb = Sandbox::new();
        let repo = sb.repo("r", &["a.txt", "b.txt", "gone.txt", "moved.txt", "old.txt"]);
        fs::write(repo.join(".gitignore"), "*.log\n").expect("write");
        sb.git(&repo, &["add", ".gitignore"]);
        sb.git(&repo, &["commit", "-q", "-m", "ignore logs"]);
        sb.git(&repo, &["checkout", "-q", "-b", "feature"]);
        write(&repo, &["committed.txt"]);
        sb.git(&repo, &["add", "committed.txt"]);
        sb.git(&repo, &["rm", "-q", "old.txt"]);
        sb.git(&repo, &["commit", "-q", "-m", "on branch"]);
        // main moves on after the branch point: its new file is not a change of this branch.
        sb.git(&repo, &["checkout", "-q", "main"]);
        write(&repo, &["main_only.txt"]);
        sb.git(&repo, &["add", "main_only.txt"]);
        sb.git(&repo, &["commit", "-q", "-m", "main moves"]);
        sb.git(&repo, &["checkout", "-q", "feature"]);

        append(&repo.join("a.txt")); // unstaged
        write(&repo, &["staged.txt", "with space ü.txt"]);
        sb.git(&repo, &["add", "staged.txt", "with space ü.txt"]);
        append(&repo.join("b.txt"));
        sb.git(&repo, &["add", "b.txt"]); // staged modification
        sb.git(&repo, &["mv", "moved.txt", "renamed.txt"]);
        fs::remove_file(repo.join("gone.txt")).expect("rm"); // unstaged deletion
        write(&repo, &["untracked/u.txt", "debug.log"]);

        assert_eq!(
            sb.changed(&repo, None),
            ["a.txt", "b.txt", "committed.txt", "renamed.txt", "staged.txt", "untracked/u.txt", "with space ü.txt"]
        );
        assert_eq!(sb.git_at(&repo).default_base(), "main");
    }

    #[test]
    fn the_remembered_base_follows_every_ref_that_moves() {
        let sb = Sandbox::new();
        let repo = sb.repo("r", &["a.txt"]);
        sb.git(&repo, &["checkout", "-q", "-b", "feature"]);
        write(&repo, &["one.txt"]);
        sb.git(&repo, &["add", "one.txt"]);
        sb.git(&repo, &["commit", "-q", "-m", "one"]);
        assert_eq!(sb.changed(&repo, None), ["one.txt"]);
        // A commit on the branch moves HEAD's ref: the new file counts at once.
        write(&repo, &["two.txt"]);
        sb.git(&repo, &["add", "two.txt"]);
        sb.git(&repo, &["commit", "-q", "-m", "two"]);
        assert_eq!(sb.changed(&repo, None), ["one.txt", "two.txt"]);
        // The default branch catching up moves the merge-base: nothing is left to review.
        sb.git(&repo, &["branch", "-f", "main", "feature"]);
        assert!(sb.changed(&repo, None).is_empty());
        // Packing the refs, then a new origin/main, are seen too.
        sb.git(&repo, &["pack-refs", "--all"]);
        write(&repo, &["three.txt"]);
        sb.git(&repo, &["add", "three.txt"]);
        sb.git(&repo, &["commit", "-q", "-m", "three"]);
        assert_eq!(sb.changed(&repo, None), ["three.txt"]);
        let first = sb.git(&repo, &["rev-parse", "main~0"]);
        sb.git(&repo, &["update-ref", "refs/remotes/origin/main", "HEAD~3"]);
        assert_eq!(sb.changed(&repo, None), ["one.txt", "three.txt", "two.txt"], "origin/main wins over main");
        sb.git(&repo, &["update-ref", "refs/remotes/origin/main", first.trim()]);
        assert_eq!(sb.changed(&repo, None), ["three.txt"]);
        // Switching branches moves HEAD itself.
        sb.git(&repo, &["checkout", "-q", "-b", "other", "HEAD~1"]);
        assert!(sb.changed(&repo, None).is_empty());
    }

    #[test]
    fn on_the_default_branch_only_uncommitted_changes_count() {
        let sb = Sandbox::new();
        let repo = sb.repo("r", &["a.txt", "b.txt"]);
        write(&repo, &["c.txt"]);
        sb.git(&repo, &["add", "c.txt"]);
        sb.git(&repo, &["commit", "-q", "-m", "second"]);
        append(&repo.join("a.txt"));
        write(&repo, &["new.txt"]);
        assert_eq!(sb.changed(&repo, None), ["a.txt", "new.txt"]);
        assert!(sb.changed(&repo, Some("HEAD")).contains(&"a.txt".to_owned()));
    }

    #[test]
    fn origin_head_of_a_clone_names_the_base() {
        let sb = Sandbox::new();
        // A default branch none of the fallback candidates would find.
        let upstream = sb.path().join("upstream");
        fs::create_dir_all(&upstream).expect("mkdir");
        sb.git(&upstream, &["init", "-q", "-b", "trunk"]);
        write(&upstream, &["base.txt"]);
        sb.git(&upstream, &["add", "-A"]);
        sb.git(&upstream, &["commit", "-q", "-m", "initial"]);
        sb.git(&sb.path(), &["clone", "-q", "upstream", "clone"]);
        let clone = sb.path().join("clone");
        sb.git(&clone, &["checkout", "-q", "-b", "feature"]);
        write(&clone, &["feature.txt"]);
        sb.git(&clone, &["add", "-A"]);
        sb.git(&clone, &["commit", "-q", "-m", "feature"]);

        assert_eq!(sb.git_at(&clone).default_base(), "origin/trunk");
        assert_eq!(sb.changed(&clone, None), ["feature.txt"]);
    }

    #[test]
    fn explicit_base_ref() {
        let sb = Sandbox::new();
        let repo = sb.repo("r", &["a.txt"]);
        sb.git(&repo, &["checkout", "-q", "-b", "one"]);
        write(&repo, &["one.txt"]);
        sb.git(&repo, &["add", "-A"]);
        sb.git(&repo, &["commit", "-q", "-m", "one"]);
        sb.git(&repo, &["checkout", "-q", "-b", "two"]);
        write(&repo, &["two.txt"]);
        sb.git(&repo, &["add", "-A"]);
        sb.git(&repo, &["commit", "-q", "-m", "two"]);

        assert_eq!(sb.changed(&repo, None), ["one.txt", "two.txt"]);
        assert_eq!(sb.changed(&repo, Some("one")), ["two.txt"]);

        let err = sb.git_at(&repo).changed_files(Some("no-such-branch")).expect_err("unknown ref");
        assert!(err.starts_with("Failed to find merge-base with 'no-such-branch': "), "{err}");
        let err = sb.git_at(&repo).changed_files(Some("--output=x")).expect_err("option-like ref");
        assert!(err.starts_with("Invalid base ref '--output=x'"), "{err}");
    }

    #[test]
    fn subdirectory_root_gets_paths_relative_to_it() {
        let sb = Sandbox::new();
        let repo = sb.repo("r", &["top.txt", "project/kept.txt", "project/edit.txt", "other/o.txt"]);
        let project = repo.join("project");
        sb.git(&repo, &["checkout", "-q", "-b", "feature"]);
        write(&repo, &["project/deep/committed.txt", "other/committed.txt"]);
        sb.git(&repo, &["add", "-A"]);
        sb.git(&repo, &["commit", "-q", "-m", "branch"]);
        append(&project.join("edit.txt"));
        append(&repo.join("top.txt"));
        write(&repo, &["project/staged.txt", "other/staged.txt"]);
        sb.git(&repo, &["add", "project/staged.txt", "other/staged.txt"]);
        write(&repo, &["project/new/u.txt", "other/u.txt", "untracked_top.txt"]);

        assert_eq!(sb.changed(&project, None), ["deep/committed.txt", "edit.txt", "new/u.txt", "staged.txt"]);
        assert_eq!(
            sb.changed(&repo, None),
            [
                "other/committed.txt",
                "other/staged.txt",
                "other/u.txt",
                "project/deep/committed.txt",
                "project/edit.txt",
                "project/new/u.txt",
                "project/staged.txt",
                "top.txt",
                "untracked_top.txt"
            ]
        );
        assert_eq!(sb.git_at(&project).reference_root(), repo);
        assert_eq!(sb.git_at(&repo).reference_root(), repo);
    }

    #[test]
    fn linked_worktrees_see_their_own_changes() {
        let sb = Sandbox::new();
        let repo = sb.repo("r", &["a.txt"]);
        // One worktree beside the main checkout, one inside it.
        let outside = sb.path().join("wt");
        sb.git(&repo, &["worktree", "add", "-q", "-b", "outside", outside.to_str().expect("utf-8")]);
        sb.git(&repo, &["worktree", "add", "-q", "-b", "inside", "inner"]);
        let inside = repo.join("inner");

        write(&outside, &["committed.txt"]);
        sb.git(&outside, &["add", "-A"]);
        sb.git(&outside, &["commit", "-q", "-m", "in worktree"]);
        append(&outside.join("a.txt"));
        write(&outside, &["untracked.txt"]);
        write(&inside, &["inner_untracked.txt"]);

        assert_eq!(sb.changed(&outside, None), ["a.txt", "committed.txt", "untracked.txt"]);
        assert_eq!(sb.changed(&inside, None), ["inner_untracked.txt"]);
        // The main checkout sees none of it (the inner worktree is a directory entry, not a file).
        assert_eq!(sb.changed(&repo, None), Vec::<String>::new());

        assert_eq!(sb.git_at(&outside).reference_root(), outside);
        assert_eq!(sb.git_at(&inside).reference_root(), repo);
    }

    #[test]
    fn repository_without_commits_lists_staged_and_untracked() {
        let sb = Sandbox::new();
        let repo = sb.path().join("r");
        fs::create_dir_all(&repo).expect("mkdir");
        sb.git(&repo, &["init", "-q", "-b", "main"]);
        write(&repo, &["staged.txt", "sub/staged.txt", "untracked.txt", "sub/untracked.txt"]);
        sb.git(&repo, &["add", "staged.txt", "sub/staged.txt"]);
        append(&repo.join("staged.txt"));

        let all = ["staged.txt", "sub/staged.txt", "sub/untracked.txt", "untracked.txt"];
        assert_eq!(sb.changed(&repo, None), all);
        assert_eq!(sb.changed(&repo, Some("main")), all);
        assert_eq!(sb.changed(&repo.join("sub"), None), ["staged.txt", "untracked.txt"]);
    }

    #[test]
    fn outside_a_repository_is_a_clear_error() {
        let sb = Sandbox::new();
        let plain = sb.path().join("plain");
        write(&plain, &["a.txt"]);
        let err = sb.git_at(&plain).changed_files(None).expect_err("not a repository");
        assert!(err.starts_with("git diff failed: "), "{err}");
        assert!(err.contains("not a git repository"), "{err}");
        assert_eq!(sb.git_at(&plain).reference_root(), plain);
    }

    #[cfg(unix)]
    #[test]
    fn reference_root_keeps_a_symlinked_spelling_of_root() {
        let sb = Sandbox::new();
        let repo = sb.repo("r", &["project/a.txt"]);
        let link = sb.path().join("link");
        std::os::unix::fs::symlink(&repo, &link).expect("symlink");
        assert_eq!(sb.git_at(&link.join("project")).reference_root(), link);
        assert_eq!(sb.git_at(&link).reference_root(), link);
    }

    #[test]
    fn public_functions_use_the_same_logic() {
        // Outside any repository the public entry points fail and fall back just like the internal ones.
        let sb = Sandbox::new();
        let plain = sb.path().join("plain");
        fs::create_dir_all(&plain).expect("mkdir");
        // (Only checked when the temp dir is not itself inside some checkout.)
        if let Err(err) = changed_files(&plain, None) {
            assert!(err.starts_with("git diff failed: "), "{err}");
            assert_eq!(reference_root(&plain), plain);
        }
    }
}
