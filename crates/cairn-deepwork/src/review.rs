//! The review pipeline after the rules are known (spec §9.5–§9.8, §7.8): matching rules against files, turning
//! matches into [`ReviewTask`]s, writing one instruction file per pending task, formatting the list for the agent,
//! and `.passed` markers.
//!
//! **Tasks** ([`build_tasks`]). A rule matches a file (root-relative, `/`-separated) when the rule's directory is
//! inside the root, the file lies under it, and the path relative to it matches an include pattern and no exclude
//! pattern. Per rule, in rule order: `individual` gives one task per matched file (that file inlined first as a
//! reference, described as the file under review), `matches_together` one task over the matched files (plus, when
//! asked, the files its include patterns find on disk that are not in the input, not excluded and not leading out
//! of the project), and `all_changed_files` one task over the whole input when anything matched. Files keep the order
//! of the input.
//! A task with exactly one file gets the literal `{file_path}` in its instructions replaced by that file (DeepWork
//! leaves it as it is). Catch-all rules are dropped when the caller passed the files explicitly.
//!
//! **Precompute commands.** DeepWork joins the command onto the rule's directory as a path and runs the result with
//! a shell from the root, so only a relative script path (optionally followed by arguments) works. cairn keeps that
//! case — when the command's first word names a file relative to the rule's directory, that word becomes the file's
//! absolute (quoted) path — and runs every other command unchanged; either way with `sh -c` from the project root,
//! with a 60 s limit ([`PRECOMPUTE_TIMEOUT`]). Commands run only for tasks that are still pending.
//!
//! **Instruction files** ([`write_instruction_files`]) go to `<root>/.deepwork/tmp/review_instructions/<id>.md`,
//! written through a temporary file and a rename. Ids are content hashes ([`review_id`]), so writing a file that
//! already exists rewrites the same review. A task whose `<id>.passed` exists is skipped; two tasks with the same
//! id are written (and listed) once.
//!
//! **Clean-up.** DeepWork deletes every `.md` without a `.passed` sibling on each write, so the quality gate and
//! `get_review_instructions` (or two agents) delete each other's pending files. cairn deletes such a file only when
//! it has not been written for an hour ([`STALE_AFTER`]); a review cycle that is still running rewrites its files
//! each time it asks, which keeps them. Left-over temporary files older than that go too. Passed reviews' files stay.
//! The directory is neither created, written nor cleaned up when it resolves outside the project (a repository could
//! ship it as a link to a directory of the user's); the call fails and says so.
//!
//! **Passing** ([`mark_passed`]): the id must be non-blank and free of `..`, `/`, `\` and NUL (DeepWork only refuses
//! `..` and a leading `/`, and fails with an I/O error on other slashes). The marker replaces whatever is there, so a
//! marker that is a link is replaced by the marker, not written through.

mod format;
mod ids;
mod instructions;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

pub use format::{NO_TASKS, format_tasks};
pub use ids::review_id;
pub(crate) use ids::rule_part;

use crate::confined;
use crate::glob::{self, Glob};
use crate::review_rule::{ReferenceFile, ReviewRule, ReviewTask, Strategy};
use crate::session_store::{Durability, write_atomic};
use instructions::slash_path;

/// Where instruction files and `.passed` markers live, relative to the project root.
pub const INSTRUCTIONS_DIR: &str = ".deepwork/tmp/review_instructions";

/// How long a precompute command may run.
pub const PRECOMPUTE_TIMEOUT: Duration = Duration::from_secs(60);

/// Pending instruction files not rewritten for this long are deleted.
pub const STALE_AFTER: Duration = Duration::from_secs(60 * 60);

/// The description of the reference entry for the file an `individual` task reviews.
const FILE_UNDER_REVIEW: &str = "File under review";

/// A review the agent still has to run.
#[derive(Debug, Clone)]
pub struct PendingReview {
    /// The task.
    pub task: ReviewTask,
    /// Its review id.
    pub review_id: String,
    /// Absolute path of its instruction file.
    pub instruction_file: PathBuf,
}

/// `file` as review rules match it: relative to `root` (an absolute path inside `root` made relative), without a
/// leading `./`.
pub fn root_relative(root: &Path, file: &str) -> String {
    let path = Path::new(file);
    let relative = path.strip_prefix(root).unwrap_or(path).to_string_lossy();
    let mut relative = relative.as_ref();
    while let Some(rest) = relative.strip_prefix("./") {
        relative = rest.trim_start_matches('/');
    }
    relative.to_owned()
}

/// The tasks `rules` ask for over `files` (root-relative, `/`-separated, in the given order), per rule in rule order.
///
/// `platform` picks the rule's agent; `drop_catch_all` (the caller passed explicit files) skips catch-all rules.
pub fn build_tasks(
    rules: &[ReviewRule],
    files: &[String],
    root: &Path,
    platform: &str,
    drop_catch_all: bool,
) -> Vec<ReviewTask> {
    let mut tasks = Vec::new();
    for rule in rules {
        if drop_catch_all && glob::is_catch_all(&rule.include) {
            continue;
        }
        let Some(matcher) = Matcher::new(rule, root) else { continue };
        let matched: Vec<String> = files.iter().filter(|file| matcher.matches(file)).cloned().collect();
        if matched.is_empty() {
            continue;
        }
        let task = |task_files: Vec<String>, reference_files: Vec<ReferenceFile>, unchanged: Vec<String>| {
            let instructions = match task_files.as_slice() {
                [file] => rule.instructions.replace("{file_path}", file),
                _ => rule.instructions.clone(),
            };
            ReviewTask {
                rule_name: rule.name.clone(),
                files: task_files,
                instructions,
                agent: rule.agent.get(platform).cloned(),
                reference_files,
                unchanged_matching_files: unchanged,
                all_changed_files: rule.all_changed_filenames.then(|| files.to_vec()),
                inline_content: None,
                precompute: rule
                    .precompute_command
                    .as_ref()
                    .map(|command| (resolve_precompute(command, &rule.rule_dir), root.to_path_buf())),
                source_file: rule.source_file.clone(),
                source_line: rule.source_line,
            }
        };
        match rule.strategy {
            Strategy::Individual => {
                for file in matched {
                    let mut references = vec![ReferenceFile {
                        path: root.join(&file),
                        label: file.clone(),
                        description: Some(FILE_UNDER_REVIEW.to_owned()),
                        boundary: Some(root.to_path_buf()),
                    }];
                    references.extend(rule.reference_files.iter().cloned());
                    tasks.push(task(vec![file], references, Vec::new()));
                }
            }
            Strategy::MatchesTogether => {
                let unchanged = if rule.unchanged_matching_files { matcher.unchanged(files) } else { Vec::new() };
                tasks.push(task(matched, rule.reference_files.clone(), unchanged));
            }
            Strategy::AllChangedFiles => tasks.push(task(files.to_vec(), rule.reference_files.clone(), Vec::new())),
        }
    }
    tasks
}

/// Whether `rule` matches at least one of `files` (root-relative, `/`-separated).
pub fn rule_matches_any(rule: &ReviewRule, files: &[String], root: &Path) -> bool {
    Matcher::new(rule, root).is_some_and(|matcher| files.iter().any(|file| matcher.matches(file)))
}

/// A rule's patterns, compiled, and where its directory is.
struct Matcher<'a> {
    rule: &'a ReviewRule,
    /// The project root.
    root: &'a Path,
    /// The rule's directory relative to the root, `/`-separated; empty for the root itself.
    dir: String,
    include: Vec<Glob>,
    exclude: Vec<Glob>,
}

impl<'a> Matcher<'a> {
    /// `None` when the rule's directory is not inside `root` (such a rule matches nothing).
    fn new(rule: &'a ReviewRule, root: &'a Path) -> Option<Matcher<'a>> {
        let dir = match rule.rule_dir.strip_prefix(root) {
            Ok(relative) => slash_path(relative),
            Err(_) => {
                let (dir, root) = (rule.rule_dir.canonicalize().ok()?, root.canonicalize().ok()?);
                slash_path(dir.strip_prefix(&root).ok()?)
            }
        };
        Some(Matcher {
            rule,
            root,
            dir,
            include: rule.include.iter().map(|p| Glob::new(p)).collect(),
            exclude: rule.exclude.iter().map(|p| Glob::new(p)).collect(),
        })
    }

    /// Whether the root-relative `file` is matched.
    fn matches(&self, file: &str) -> bool {
        let relative = if self.dir.is_empty() {
            file
        } else {
            match file.strip_prefix(self.dir.as_str()).and_then(|rest| rest.strip_prefix('/')) {
                Some(rest) => rest,
                None => return false,
            }
        };
        self.matches_relative(relative)
    }

    /// Whether a path relative to the rule's directory is included and not excluded.
    fn matches_relative(&self, relative: &str) -> bool {
        self.include.iter().any(|g| g.is_match(relative)) && !self.exclude.iter().any(|g| g.is_match(relative))
    }

    /// Files the include patterns find on disk (root-relative) that are not in `files` and not excluded, sorted.
    /// Files that resolve outside the project (through a linked directory or a linked file) are left out.
    fn unchanged(&self, files: &[String]) -> Vec<String> {
        let input: HashSet<&str> = files.iter().map(String::as_str).collect();
        let mut found = BTreeSet::new();
        for pattern in &self.rule.include {
            for path in glob::expand(&self.rule.rule_dir, pattern) {
                let Ok(relative) = path.strip_prefix(&self.rule.rule_dir) else { continue };
                if confined::resolve(&path, Some(self.root)).is_err() {
                    continue;
                }
                let relative = slash_path(relative);
                if self.exclude.iter().any(|g| g.is_match(&relative)) {
                    continue;
                }
                let from_root = if self.dir.is_empty() { relative } else { format!("{}/{relative}", self.dir) };
                if !input.contains(from_root.as_str()) {
                    found.insert(from_root);
                }
            }
        }
        found.into_iter().collect()
    }
}

/// The command to run for a rule's precompute command (see the module doc).
fn resolve_precompute(command: &str, rule_dir: &Path) -> String {
    let trimmed = command.trim_start();
    let first = trimmed.split(char::is_whitespace).next().unwrap_or_default();
    if first.is_empty() || Path::new(first).is_absolute() {
        return command.to_owned();
    }
    let script = rule_dir.join(first);
    if !script.is_file() {
        return command.to_owned();
    }
    format!("{}{}", shell_quote(&script.to_string_lossy()), &trimmed[first.len()..])
}

/// `text` quoted for `sh`.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The directory holding instruction files and `.passed` markers.
pub fn instructions_dir(root: &Path) -> PathBuf {
    root.join(INSTRUCTIONS_DIR)
}

/// Writes the instruction file of every task not yet passed and returns those pending reviews, in task order.
///
/// Runs the pending tasks' precompute commands first. The error is the bare cause (the caller says what failed).
pub fn write_instruction_files(root: &Path, tasks: Vec<ReviewTask>) -> Result<Vec<PendingReview>, String> {
    write_instruction_files_with(root, tasks, PRECOMPUTE_TIMEOUT)
}

/// [`write_instruction_files`] with a chosen precompute time limit.
fn write_instruction_files_with(
    root: &Path,
    tasks: Vec<ReviewTask>,
    timeout: Duration,
) -> Result<Vec<PendingReview>, String> {
    let dir = scratch_dir(root)?;
    remove_stale(&dir, STALE_AFTER);

    let pending = not_passed(root, tasks);

    let mut commands: Vec<(String, PathBuf)> = Vec::new();
    for (task, _) in &pending {
        if let Some(command) = &task.precompute
            && !commands.contains(command)
        {
            commands.push(command.clone());
        }
    }
    let outputs = instructions::run_precompute_commands(&commands, timeout);
    let precomputed: HashMap<&(String, PathBuf), String> = commands.iter().zip(outputs).collect();

    let mut written = Vec::with_capacity(pending.len());
    for (task, id) in pending {
        let output = task.precompute.as_ref().and_then(|command| precomputed.get(command)).map(String::as_str);
        let text = instructions::render(&task, &id, root, output);
        let path = dir.join(format!("{id}.md"));
        write_atomic(&path, text.as_bytes(), Durability::Replaced)
            .map_err(|err| format!("could not write {}: {err}", path.display()))?;
        written.push(PendingReview { task, review_id: id, instruction_file: path });
    }
    Ok(written)
}

/// The tasks whose review has no `.passed` marker, with their review ids, in task order; a task whose id came
/// earlier is left out. Reads the tasks' files (for the ids) and writes nothing.
pub fn not_passed(root: &Path, tasks: Vec<ReviewTask>) -> Vec<(ReviewTask, String)> {
    let mut seen = HashSet::new();
    tasks
        .into_iter()
        .filter_map(|task| {
            let id = review_id(&task, root);
            (seen.insert(id.clone()) && !has_passed(root, &id)).then_some((task, id))
        })
        .collect()
}

/// Every instruction file (written by the quality gate or `get_review_instructions`, passed or not), sorted by id:
/// `(review id, the files it lists under review)`. Reads, writes nothing.
pub fn instruction_files(root: &Path) -> Vec<(String, Vec<String>)> {
    let dir = instructions_dir(root);
    let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut found: Vec<(String, Vec<String>)> = entries
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let id = name.strip_suffix(".md").filter(|id| !id.starts_with(".tmp"))?.to_owned();
            let text = confined::read_text(&entry.path(), Some(root), None).ok()?;
            Some((id, instructions::files_to_review(&text)))
        })
        .collect();
    found.sort();
    found
}

/// Whether review `review_id` has passed.
pub fn has_passed(root: &Path, review_id: &str) -> bool {
    instructions_dir(root).join(format!("{review_id}.passed")).exists()
}

/// Deletes instruction files without a `.passed` marker, and left-over temporary files, not modified for `max_age`.
fn remove_stale(dir: &Path, max_age: Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let Ok(metadata) = entry.metadata() else { continue };
        let old = metadata.modified().ok().and_then(|t| now.duration_since(t).ok()).is_some_and(|age| age > max_age);
        if !metadata.is_file() || !old {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let remove = match name.strip_suffix(".md") {
            Some(stem) => !dir.join(format!("{stem}.passed")).exists(),
            None => name.starts_with(".tmp") && name.ends_with(".tmp"),
        };
        if remove {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// `mark_review_as_passed`: records that the review `review_id` passed, so it is skipped while its files stay
/// unchanged.
pub fn mark_passed(root: &Path, review_id: &str) -> Result<String, String> {
    if review_id.trim().is_empty() {
        return Err("Validation error: review_id must not be empty.".to_owned());
    }
    // The id becomes one file name: separators and the `.`/`..` names could leave the directory. Dots inside a name
    // are fine (a file `notes...md` gives an id with `...` in it, and its review must be passable).
    if matches!(review_id, "." | "..") || review_id.contains(['/', '\\', '\0']) {
        return Err("Validation error: review_id must not contain path traversal sequences.".to_owned());
    }
    let marker = instructions_dir(root).join(format!("{review_id}.passed"));
    let failed = |err: &dyn std::fmt::Display| {
        format!(
            "Could not mark review '{review_id}' as passed: writing {} failed: {err}. Check that the project's \
                 .deepwork/tmp directory is writable, then call mark_review_as_passed again.",
            marker.display()
        )
    };
    scratch_dir(root).map_err(|err| failed(&err))?;
    // Replaced, not written through: a marker that is a link must not truncate the file it points at.
    write_atomic(&marker, b"", Durability::Replaced).map_err(|err| failed(&err))?;
    Ok(format!("Review '{review_id}' marked as passed."))
}

/// The instruction directory, created when missing; refused when it (or the parent it would be created in) resolves
/// outside the project, since cairn writes there and deletes stale files there.
fn scratch_dir(root: &Path) -> Result<PathBuf, String> {
    let dir = instructions_dir(root);
    confined::check_inside(&dir, root).map_err(|err| format!("{} cannot be used: {err}", dir.display()))?;
    std::fs::create_dir_all(&dir).map_err(|err| format!("could not create {}: {err}", dir.display()))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use indexmap::IndexMap;

    /// A project in a temporary directory with the given files (contents = their paths).
    fn project(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, format!("{file}\n")).unwrap();
        }
        dir
    }

    fn rule(root: &Path, name: &str, include: &[&str], strategy: Strategy) -> ReviewRule {
        ReviewRule {
            name: name.to_owned(),
            description: format!("{name} rule"),
            include: include.iter().map(|p| (*p).to_owned()).collect(),
            exclude: Vec::new(),
            strategy,
            instructions: "Check {file_path}.".to_owned(),
            agent: IndexMap::new(),
            all_changed_filenames: false,
            unchanged_matching_files: false,
            reference_files: Vec::new(),
            precompute_command: None,
            rule_dir: root.to_path_buf(),
            source_file: root.join(".deepreview"),
            source_line: 1,
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn files_of(tasks: &[ReviewTask]) -> Vec<Vec<String>> {
        tasks.iter().map(|t| t.files.clone()).collect()
    }

    #[test]
    fn individual_gives_one_task_per_file_with_the_file_inlined_first() {
        let root = project(&["a.md", "docs/c.md", "src/b.rs", "guide.txt"]);
        let mut r = rule(root.path(), "md", &["**/*.md"], Strategy::Individual);
        r.reference_files = vec![ReferenceFile {
            path: root.path().join("guide.txt"),
            label: "guide.txt".to_owned(),
            description: None,
            boundary: Some(root.path().to_path_buf()),
        }];
        let files = strings(&["src/b.rs", "docs/c.md", "a.md"]);
        let tasks = build_tasks(&[r], &files, root.path(), "claude", false);
        assert_eq!(files_of(&tasks), [strings(&["docs/c.md"]), strings(&["a.md"])]);
        let first = &tasks[0];
        assert_eq!(first.instructions, "Check docs/c.md.");
        assert_eq!(first.reference_files.len(), 2);
        assert_eq!(first.reference_files[0].path, root.path().join("docs/c.md"));
        assert_eq!(first.reference_files[0].label, "docs/c.md");
        assert_eq!(first.reference_files[0].description.as_deref(), Some("File under review"));
        assert_eq!(first.reference_files[1].label, "guide.txt");
        assert!(first.unchanged_matching_files.is_empty() && first.all_changed_files.is_none());
        assert_eq!((first.source_file.clone(), first.source_line), (root.path().join(".deepreview"), 1));
    }

    #[test]
    fn matches_together_gives_one_task_and_can_add_unchanged_files() {
        let root = project(&["docs/x.md", "docs/y.md", "docs/.hidden.md", "docs/skip.md", "docs/sub/z.md", "a.md"]);
        let mut r = rule(root.path(), "docs", &["docs/*.md"], Strategy::MatchesTogether);
        r.exclude = strings(&["docs/skip.md"]);
        let files = strings(&["docs/x.md", "a.md", "docs/skip.md", "docs/new.md"]);
        let tasks = build_tasks(std::slice::from_ref(&r), &files, root.path(), "claude", false);
        assert_eq!(files_of(&tasks), [strings(&["docs/x.md", "docs/new.md"])]);
        assert_eq!(tasks[0].instructions, "Check {file_path}.", "several files: left as it is");
        assert!(tasks[0].unchanged_matching_files.is_empty());
        assert!(tasks[0].reference_files.is_empty());

        r.unchanged_matching_files = true;
        let tasks = build_tasks(&[r], &files, root.path(), "claude", false);
        assert_eq!(tasks[0].unchanged_matching_files, strings(&["docs/.hidden.md", "docs/y.md"]));
    }

    #[test]
    fn unchanged_files_of_a_rule_in_a_subdirectory_are_root_relative() {
        let root = project(&["sub/a.md", "sub/b.md", "sub/deep/c.md", "other/d.md"]);
        let mut r = rule(root.path(), "sub", &["**/*.md"], Strategy::MatchesTogether);
        r.rule_dir = root.path().join("sub");
        r.unchanged_matching_files = true;
        let tasks = build_tasks(&[r], &strings(&["sub/a.md", "other/d.md"]), root.path(), "claude", false);
        assert_eq!(files_of(&tasks), [strings(&["sub/a.md"])]);
        assert_eq!(tasks[0].instructions, "Check sub/a.md.", "one file: substituted");
        assert_eq!(tasks[0].unchanged_matching_files, strings(&["sub/b.md", "sub/deep/c.md"]));
    }

    #[test]
    fn unchanged_files_leading_out_of_the_project_are_left_out() {
        let outside = project(&["notes.md", "deep/secret.md"]);
        let root = project(&["docs/a.md", "docs/b.md"]);
        std::os::unix::fs::symlink(outside.path().join("notes.md"), root.path().join("docs/leak.md")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("docs/ext")).unwrap();
        std::os::unix::fs::symlink(root.path().join("docs/b.md"), root.path().join("docs/alias.md")).unwrap();
        let mut r = rule(root.path(), "docs", &["docs/*.md", "docs/*/*.md", "../*.md"], Strategy::MatchesTogether);
        r.unchanged_matching_files = true;
        let tasks = build_tasks(&[r], &strings(&["docs/a.md"]), root.path(), "claude", false);
        assert_eq!(tasks[0].unchanged_matching_files, strings(&["docs/alias.md", "docs/b.md"]));
    }

    #[test]
    fn all_changed_files_takes_the_whole_input_when_anything_matches() {
        let root = project(&[]);
        let r = rule(root.path(), "tripwire", &["Cargo.lock"], Strategy::AllChangedFiles);
        let files = strings(&["src/a.rs", "Cargo.lock", "README.md"]);
        let tasks = build_tasks(std::slice::from_ref(&r), &files, root.path(), "claude", false);
        assert_eq!(files_of(&tasks), std::slice::from_ref(&files));
        assert!(build_tasks(&[r], &strings(&["src/a.rs"]), root.path(), "claude", false).is_empty());
    }

    #[test]
    fn all_changed_filenames_adds_the_input_list_and_agent_follows_platform() {
        let root = project(&[]);
        let mut r = rule(root.path(), "rs", &["**/*.rs"], Strategy::MatchesTogether);
        r.all_changed_filenames = true;
        r.agent.insert("claude".to_owned(), "rust-expert".to_owned());
        let files = strings(&["a.rs", "b.md"]);
        let tasks = build_tasks(std::slice::from_ref(&r), &files, root.path(), "claude", false);
        assert_eq!(tasks[0].all_changed_files.as_ref(), Some(&files));
        assert_eq!(tasks[0].agent.as_deref(), Some("rust-expert"));
        let tasks = build_tasks(&[r], &files, root.path(), "gemini", false);
        assert_eq!(tasks[0].agent, None);
    }

    #[test]
    fn catch_all_rules_are_dropped_only_for_explicit_files() {
        let root = project(&[]);
        let rules = [
            rule(root.path(), "everything", &["**/*"], Strategy::MatchesTogether),
            rule(root.path(), "md", &["*.md"], Strategy::MatchesTogether),
        ];
        let files = strings(&["a.md"]);
        let names = |tasks: Vec<ReviewTask>| tasks.into_iter().map(|t| t.rule_name).collect::<Vec<_>>();
        assert_eq!(names(build_tasks(&rules, &files, root.path(), "claude", false)), ["everything", "md"]);
        assert_eq!(names(build_tasks(&rules, &files, root.path(), "claude", true)), ["md"]);
    }

    #[test]
    fn rules_match_relative_to_their_directory_and_never_outside_the_root() {
        let root = project(&[]);
        let mut sub = rule(root.path(), "sub", &["*.md"], Strategy::Individual);
        sub.rule_dir = root.path().join("src");
        let files = strings(&["src/a.md", "a.md", "src/x/b.md", "srcfoo/c.md"]);
        assert_eq!(
            files_of(&build_tasks(std::slice::from_ref(&sub), &files, root.path(), "claude", false)),
            [strings(&["src/a.md"])]
        );
        assert!(rule_matches_any(&sub, &files, root.path()));
        assert!(!rule_matches_any(&sub, &strings(&["a.md", "srcfoo/c.md"]), root.path()));

        let elsewhere = tempfile::tempdir().unwrap();
        let mut outside = rule(root.path(), "outside", &["**"], Strategy::Individual);
        outside.rule_dir = elsewhere.path().to_path_buf();
        assert!(!rule_matches_any(&outside, &files, root.path()));
        assert!(build_tasks(&[outside], &files, root.path(), "claude", false).is_empty());
    }

    #[test]
    fn precompute_commands_resolve_scripts_in_the_rule_directory() {
        let root = project(&["src/ctx.sh"]);
        let dir = root.path().join("src");
        assert_eq!(resolve_precompute("ctx.sh --stat", &dir), format!("'{}' --stat", dir.join("ctx.sh").display()));
        assert_eq!(resolve_precompute("git diff --stat", &dir), "git diff --stat");
        assert_eq!(resolve_precompute("/bin/echo hi", &dir), "/bin/echo hi");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");

        let mut r = rule(root.path(), "p", &["*.md"], Strategy::Individual);
        r.precompute_command = Some("echo hi".to_owned());
        let task = build_tasks(&[r], &strings(&["a.md"]), root.path(), "claude", false).remove(0);
        assert_eq!(task.precompute, Some(("echo hi".to_owned(), root.path().to_path_buf())));
    }

    #[test]
    fn instruction_files_are_written_and_passed_reviews_skipped() {
        let root = project(&["a.md", "b.md"]);
        let rules = [rule(root.path(), "md", &["*.md"], Strategy::Individual)];
        let files = strings(&["a.md", "b.md"]);
        let tasks = build_tasks(&rules, &files, root.path(), "claude", false);
        let pending = write_instruction_files(root.path(), tasks.clone()).unwrap();
        assert_eq!(pending.len(), 2);
        let first = &pending[0];
        assert!(first.review_id.starts_with("md--a.md--"));
        assert_eq!(first.instruction_file, root.path().join(INSTRUCTIONS_DIR).join(format!("{}.md", first.review_id)));
        let text = std::fs::read_to_string(&first.instruction_file).unwrap();
        assert!(text.starts_with("# Review: md — a.md\n"));
        assert!(text.contains("Check a.md."));
        assert!(text.contains("### a.md\n\nFile under review\n\n```markdown\na.md\n```\n"));
        assert!(text.contains(&format!("- `review_id`: `\"{}\"`", first.review_id)));
        assert!(text.ends_with("This review was requested by the policy at `.deepreview:1`.\n"));

        assert_eq!(
            mark_passed(root.path(), &first.review_id).unwrap(),
            format!("Review '{}' marked as passed.", first.review_id)
        );
        let again = write_instruction_files(root.path(), tasks.clone()).unwrap();
        assert_eq!(again.iter().map(|p| p.task.files.clone()).collect::<Vec<_>>(), [strings(&["b.md"])]);
        assert!(first.instruction_file.exists(), "a passed review's file stays");

        std::fs::write(root.path().join("a.md"), "changed\n").unwrap();
        let changed = write_instruction_files(root.path(), tasks).unwrap();
        assert_eq!(changed.len(), 2, "editing the file gives a new id");
        assert_ne!(changed[0].review_id, first.review_id);
    }

    #[test]
    fn identical_ids_are_written_once() {
        let root = project(&["a.md"]);
        let mut other = rule(root.path(), "md", &["a.md"], Strategy::Individual);
        other.source_file = root.path().join("x/.deepreview");
        let rules = [rule(root.path(), "md", &["*.md"], Strategy::Individual), other];
        let tasks = build_tasks(&rules, &strings(&["a.md"]), root.path(), "claude", false);
        assert_eq!(tasks.len(), 2);
        let pending = write_instruction_files(root.path(), tasks).unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].task.source_file, root.path().join(".deepreview"));
    }

    #[test]
    fn many_files_and_inline_tasks_have_the_documented_ids() {
        let names: Vec<String> = (0..12).map(|i| format!("file_{i:02}.md")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let root = project(&refs);
        let rules = [rule(root.path(), "everything", &["**/*"], Strategy::MatchesTogether)];
        let tasks = build_tasks(&rules, &names, root.path(), "claude", false);
        let id = review_id(&tasks[0], root.path());
        assert!(id.starts_with("everything--12_files--") && id.len() == "everything--12_files--".len() + 12, "{id}");

        let inline = ReviewTask {
            rule_name: "step_choose_topic_output_topic".to_owned(),
            files: Vec::new(),
            inline_content: Some("Rust MCP servers".to_owned()),
            ..tasks[0].clone()
        };
        let pending = write_instruction_files(root.path(), vec![inline]).unwrap();
        assert_eq!(pending[0].review_id, "step_choose_topic_output_topic--inline--a1f53798a594");
        let text = std::fs::read_to_string(&pending[0].instruction_file).unwrap();
        assert!(text.contains("## Content to Review\n\nRust MCP servers\n"));
    }

    #[test]
    fn precompute_output_failure_and_timeout_reach_the_instruction_files() {
        let root = project(&["src/a.md", "b.md", "c.md"]);
        let with = |name: &str, include: &str, command: &str| {
            let mut r = rule(root.path(), name, &[include], Strategy::Individual);
            r.precompute_command = Some(command.to_owned());
            r
        };
        // A rule in src/: its command still runs from the project root.
        let mut in_src = with("ok", "a.md", "echo \"context from $(basename \"$PWD\")\"");
        in_src.rule_dir = root.path().join("src");
        let rules = [in_src, with("bad", "b.md", "echo oops >&2; exit 4"), with("slow", "c.md", "sleep 30")];
        let files = strings(&["src/a.md", "b.md", "c.md"]);
        let tasks = build_tasks(&rules, &files, root.path(), "claude", false);
        let pending = write_instruction_files_with(root.path(), tasks, Duration::from_millis(300)).unwrap();
        let text = |i: usize| std::fs::read_to_string(&pending[i].instruction_file).unwrap();
        let root_name = root.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(text(0).contains(&format!("## Precomputed Context\n\ncontext from {root_name}\n\n## After Review")));
        assert!(
            text(1)
                .contains("## Precomputed Context\n\n**Precompute command failed** (exit code 4):\n```\noops\n```\n\n")
        );
        assert!(
            text(2).contains("## Precomputed Context\n\n**Precompute command timed out** after 0.3s:\n`sleep 30`\n\n")
        );
    }

    #[test]
    fn stale_pending_files_are_removed_and_recent_or_passed_ones_kept() {
        let root = project(&[]);
        let dir = instructions_dir(root.path());
        std::fs::create_dir_all(&dir).unwrap();
        let old = SystemTime::now() - Duration::from_secs(2 * 60 * 60);
        let make = |name: &str, aged: bool| {
            let path = dir.join(name);
            std::fs::write(&path, "x").unwrap();
            if aged {
                std::fs::File::options().write(true).open(&path).unwrap().set_modified(old).unwrap();
            }
            path
        };
        let stale = make("r--a--000000000000.md", true);
        let fresh = make("r--b--000000000000.md", false);
        let passed = make("r--c--000000000000.md", true);
        make("r--c--000000000000.passed", true);
        let temp = make(".tmpABC.tmp", true);
        let other = make("notes.txt", true);
        write_instruction_files(root.path(), Vec::new()).unwrap();
        assert!(!stale.exists() && !temp.exists());
        assert!(fresh.exists() && passed.exists() && other.exists());
    }

    #[test]
    fn mark_passed_validates_the_id() {
        let root = project(&[]);
        let empty = "Validation error: review_id must not be empty.";
        let traversal = "Validation error: review_id must not contain path traversal sequences.";
        assert_eq!(mark_passed(root.path(), "").unwrap_err(), empty);
        assert_eq!(mark_passed(root.path(), "  \t").unwrap_err(), empty);
        for bad in ["..", ".", "../x", "/etc/passwd", "a/b", "a\\b", "a\0b"] {
            assert_eq!(mark_passed(root.path(), bad).unwrap_err(), traversal, "{bad:?}");
        }
        assert!(!root.path().join(".deepwork").exists(), "nothing written for refused ids");
        assert!(mark_passed(root.path(), "md--what...md--73cb3858a687").is_ok(), "dots inside the id are fine");
        assert_eq!(
            mark_passed(root.path(), "r--a.md--8af1d328d75e").unwrap(),
            "Review 'r--a.md--8af1d328d75e' marked as passed."
        );
        let marker = root.path().join(INSTRUCTIONS_DIR).join("r--a.md--8af1d328d75e.passed");
        assert_eq!(std::fs::read(marker).unwrap(), b"");
    }
}
