//! The instruction file of one review task (spec §9.7) and the precompute commands whose output goes into it.
//!
//! The file is markdown, sections in this order, each `## ` heading followed by a blank line and sections omitted
//! when they have nothing to say: `# Review: <rule> — <scope>`, `## Project Root` (every path is relative to the
//! absolute root), `## Review Instructions`, `## Relevant File Contents` (reference files inlined, at most
//! [`MAX_REFERENCE_FILES`] files and [`MAX_REFERENCE_BYTES`] bytes in all; the file that crosses the budget is cut
//! with a marker — no more of it is read than fits — later ones are named in an "omitted" line; a file that is not a
//! regular file or leads out of the project is not read, a note says why), `## Files to Review` (`- @<path>`),
//! `## Content to Review` (text under review), `## Unchanged Matching Files`, `## All Changed Files`,
//! `## Precomputed Context` and `## After Review` with the `review_id` line, then `---` and the policy's location.
//!
//! Precompute commands run with `sh -c` in the directory the task names, stdin closed, each in its own process group
//! so that a timeout kills everything it started; unique commands run in parallel, at most [`MAX_PARALLEL`] at once.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::confined;
use crate::process::{Finished, run_with_timeout};
use crate::review_rule::{ReferenceFile, ReviewTask};

/// At most this many reference files are inlined into one instruction file.
pub(crate) const MAX_REFERENCE_FILES: usize = 20;

/// At most this many bytes of reference file contents are inlined into one instruction file.
pub(crate) const MAX_REFERENCE_BYTES: usize = 256 * 1024;

/// At most this many precompute commands run at the same time.
pub(crate) const MAX_PARALLEL: usize = 8;

/// The text of the instruction file of `task`.
///
/// `precomputed` is the rendered output of the task's precompute command, if it has one.
pub(crate) fn render(task: &ReviewTask, review_id: &str, root: &Path, precomputed: Option<&str>) -> String {
    fn heading(parts: &mut Vec<String>, title: &str) {
        parts.push(format!("## {title}"));
        parts.push(String::new());
    }
    let mut parts: Vec<String> = Vec::new();

    parts.push(format!("# Review: {} — {}", task.rule_name, scope(task)));
    parts.push(String::new());

    heading(&mut parts, "Project Root");
    parts.push(format!(
        "**Every path in this document is relative to `{}`.** Resolve each one against that directory, the `@` \
         references included, and do not look for these files in any other checkout or working directory.",
        root.display()
    ));
    parts.push(String::new());

    heading(&mut parts, "Review Instructions");
    parts.push(task.instructions.trim().to_owned());
    parts.push(String::new());

    if !task.reference_files.is_empty() {
        heading(&mut parts, "Relevant File Contents");
        parts.extend(reference_blocks(&task.reference_files));
    }

    if !task.files.is_empty() {
        heading(&mut parts, "Files to Review");
        parts.extend(task.files.iter().map(|file| format!("- @{file}")));
        parts.push(String::new());
    }

    if let Some(content) = &task.inline_content {
        heading(&mut parts, "Content to Review");
        parts.push(content.trim_end().to_owned());
        parts.push(String::new());
    }

    if !task.unchanged_matching_files.is_empty() {
        heading(&mut parts, "Unchanged Matching Files");
        parts.push(
            "These files match the same rule but did not change. Open them when you need context; they are not \
             under review themselves."
                .to_owned(),
        );
        parts.push(String::new());
        parts.extend(task.unchanged_matching_files.iter().map(|file| format!("- @{file}")));
        parts.push(String::new());
    }

    if let Some(changed) = task.all_changed_files.as_ref().filter(|files| !files.is_empty()) {
        heading(&mut parts, "All Changed Files");
        parts.push("For context, this is every file in the change being reviewed:".to_owned());
        parts.push(String::new());
        parts.extend(changed.iter().map(|file| format!("- {file}")));
        parts.push(String::new());
    }

    if let Some(output) = precomputed.map(str::trim_end).filter(|output| !output.is_empty()) {
        heading(&mut parts, "Precomputed Context");
        parts.push(output.to_owned());
        parts.push(String::new());
    }

    heading(&mut parts, "After Review");
    parts.push(
        "If the review passes (no findings remain, or the user dismissed the remaining ones), call the \
         `mark_review_as_passed` tool with this id, so that the review is not asked for again while the files stay \
         as they are:"
            .to_owned(),
    );
    parts.push(String::new());
    parts.push(format!("- `review_id`: `\"{review_id}\"`"));
    parts.push(String::new());
    parts.push("---".to_owned());
    parts.push(format!("This review was requested by the policy at `{}`.", source_location(task, root)));
    parts.push(String::new());
    parts.join("\n")
}

/// What the review covers: `inline content`, the single file, or `<N> files`.
fn scope(task: &ReviewTask) -> String {
    match task.files.as_slice() {
        [] if task.inline_content.is_some() => "inline content".to_owned(),
        [file] => file.clone(),
        files => format!("{} files", files.len()),
    }
}

/// The files an instruction file lists under `## Files to Review` (what [`render`] wrote there), in order.
pub(crate) fn files_to_review(text: &str) -> Vec<String> {
    let Some((_, section)) = text.split_once("\n## Files to Review\n\n") else { return Vec::new() };
    section.lines().map_while(|line| line.strip_prefix("- @")).map(str::to_owned).collect()
}

/// `<defining file relative to root>:<line>`, or the absolute path when the file lies outside the root.
pub(crate) fn source_location(task: &ReviewTask, root: &Path) -> String {
    let path = match task.source_file.strip_prefix(root) {
        Ok(relative) if !relative.as_os_str().is_empty() => slash_path(relative),
        _ => task.source_file.display().to_string(),
    };
    format!("{path}:{}", task.source_line)
}

/// A relative path with `/` separators.
pub(crate) fn slash_path(path: &Path) -> String {
    path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

/// The inlined reference files, within the caps.
fn reference_blocks(files: &[ReferenceFile]) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut budget = MAX_REFERENCE_BYTES;
    let mut shown = 0;
    let mut omitted: Vec<&str> = Vec::new();
    for file in files {
        if shown >= MAX_REFERENCE_FILES || budget == 0 {
            omitted.push(&file.label);
            continue;
        }
        shown += 1;
        let (text, size_if_cut) = match read_reference(file, budget) {
            Ok(read) => read,
            Err(err) => {
                blocks.push(format!("(could not inline {}: {err})\n", file.label));
                continue;
            }
        };
        let mut block = format!("### {}", file.label);
        if let Some(description) = file.description.as_deref().filter(|d| !d.is_empty()) {
            block.push_str("\n\n");
            block.push_str(description);
        }
        let body = match size_if_cut {
            None if text.len() <= budget => {
                budget -= text.len();
                text.trim_end_matches('\n').to_owned()
            }
            size => {
                let size = size.unwrap_or(text.len() as u64);
                let mut cut = budget.min(text.len());
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                let body = format!(
                    "{}\n... (truncated: file is {size} bytes, budget left was {budget})",
                    text[..cut].trim_end_matches('\n'),
                );
                budget = 0;
                body
            }
        };
        block.push_str(&format!("\n\n```{}\n{body}\n```\n", language(&file.path)));
        blocks.push(block);
    }
    if !omitted.is_empty() {
        blocks.push(format!(
            "_({} more reference file(s) omitted due to size/count caps: {})_",
            omitted.len(),
            omitted.join(", ")
        ));
        blocks.push(String::new());
    }
    blocks
}

/// A reference file's text, or why it cannot be inlined. A file larger than `budget` is read only so far (and the
/// size it has is returned): a character cut in two at the end is dropped.
fn read_reference(file: &ReferenceFile, budget: usize) -> Result<(String, Option<u64>), String> {
    let path = &file.path;
    let fail = |err: &dyn std::fmt::Display| format!("{}: {err}", path.display());
    // A little more than the budget, so a file that only fits once its CRLFs are LFs is still read whole.
    let max = u64::try_from(budget).unwrap_or(u64::MAX).saturating_add(4);
    let (bytes, size) = confined::read_prefix(path, file.boundary.as_deref(), max).map_err(|err| fail(&err))?;
    let whole = bytes.len() as u64 == size;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // Cut inside a character: keep what comes before it.
        Err(err) if !whole && err.utf8_error().error_len().is_none() => {
            let valid = err.utf8_error().valid_up_to();
            let mut bytes = err.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).map_err(|_| fail(&confined::Refused::NotUtf8))?
        }
        Err(_) => return Err(fail(&confined::Refused::NotUtf8)),
    };
    Ok((super::ids::universal_newlines(text), (!whole).then_some(size)))
}

/// The code fence language for a file.
fn language(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "yml" | "yaml" => "yaml",
        "json" => "json",
        "md" => "markdown",
        "py" => "python",
        "sh" => "bash",
        "toml" => "toml",
        _ => "text",
    }
}

/// Runs each `(command, directory)` (in parallel, at most [`MAX_PARALLEL`] at once) and renders each outcome for the
/// `## Precomputed Context` section, in the order given.
pub(crate) fn run_precompute_commands(commands: &[(String, PathBuf)], timeout: Duration) -> Vec<String> {
    if commands.len() <= 1 {
        return commands.iter().map(|(command, dir)| run_precompute(command, dir, timeout)).collect();
    }
    let next = AtomicUsize::new(0);
    let results = Mutex::new(vec![String::new(); commands.len()]);
    std::thread::scope(|scope| {
        for _ in 0..commands.len().min(MAX_PARALLEL) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some((command, dir)) = commands.get(index) else { break };
                    let rendered = run_precompute(command, dir, timeout);
                    results.lock().unwrap_or_else(|poisoned| poisoned.into_inner())[index] = rendered;
                }
            });
        }
    });
    results.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs one precompute command and renders its outcome: stdout on success, otherwise a note saying what went wrong.
pub(crate) fn run_precompute(command: &str, dir: &Path, timeout: Duration) -> String {
    let mut process = Command::new("sh");
    process.arg("-c").arg(command).current_dir(dir);
    match run_with_timeout(process, timeout) {
        Finished::Exited(output) if output.status.success() => String::from_utf8_lossy(&output.stdout).into_owned(),
        Finished::Exited(output) => format!(
            "**Precompute command failed** (exit code {}):\n```\n{}\n```",
            exit_code(&output),
            String::from_utf8_lossy(&output.stderr).trim_end()
        ),
        Finished::TimedOut => {
            format!("**Precompute command timed out** after {}s:\n`{command}`", timeout.as_secs_f64())
        }
        Finished::Failed(err) => format!("**Precompute command error**: {err}"),
    }
}

/// The exit code, or minus the signal number for a process killed by a signal (as Python reports it).
fn exit_code(output: &Output) -> i32 {
    if let Some(code) = output.status.code() {
        return code;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = output.status.signal() {
            return -signal;
        }
    }
    -1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(files: &[&str]) -> ReviewTask {
        ReviewTask {
            instructions: "  Check it.\n".to_owned(),
            source_file: PathBuf::from("/p/src/.deepreview"),
            source_line: 3,
            ..ReviewTask::of_files("r", files.iter().map(|f| (*f).to_owned()).collect())
        }
    }

    #[test]
    fn the_files_under_review_read_back_from_a_rendered_file() {
        let text = render(&task(&["a.md", "b/c d.md"]), "r--2_files--0123456789ab", Path::new("/p"), None);
        assert_eq!(files_to_review(&text), ["a.md", "b/c d.md"]);
        let mut inline = task(&[]);
        inline.inline_content = Some("- @not-a-file".to_owned());
        assert!(files_to_review(&render(&inline, "r--inline--0123456789ab", Path::new("/p"), None)).is_empty());
    }

    #[test]
    fn minimal_file_has_the_sections_in_order() {
        let text = render(&task(&["a.md"]), "r--a.md--0123456789ab", Path::new("/p"), None);
        let expected_start =
            "# Review: r — a.md\n\n## Project Root\n\n**Every path in this document is relative to `/p`.**";
        assert!(text.starts_with(expected_start), "{text}");
        assert!(text.contains(
            "\n\n## Review Instructions\n\nCheck it.\n\n## Files to Review\n\n- @a.md\n\n## After Review\n\n"
        ));
        assert!(text.ends_with(
            "\n\n- `review_id`: `\"r--a.md--0123456789ab\"`\n\n---\nThis review was requested by the policy at \
             `src/.deepreview:3`.\n"
        ));
        assert!(text.contains("`mark_review_as_passed`"));
        for absent in ["Relevant File Contents", "Content to Review", "Unchanged", "All Changed", "Precomputed"] {
            assert!(!text.contains(absent), "{absent}");
        }
    }

    #[test]
    fn scope_and_optional_sections() {
        let mut inline = task(&[]);
        inline.inline_content = Some("Rust MCP servers\n\n".to_owned());
        inline.source_file = PathBuf::from("/elsewhere/job.yml");
        let text = render(&inline, "id", Path::new("/p"), Some("  \n"));
        assert!(text.starts_with("# Review: r — inline content\n"));
        assert!(text.contains("\n## Content to Review\n\nRust MCP servers\n\n## After Review"));
        assert!(!text.contains("## Files to Review"));
        assert!(!text.contains("## Precomputed Context"), "blank output is left out");
        assert!(text.contains("policy at `/elsewhere/job.yml:3`."));

        let mut many = task(&["a", "b/c"]);
        many.unchanged_matching_files = vec!["d".to_owned()];
        many.all_changed_files = Some(vec!["a".to_owned(), "b/c".to_owned(), "z".to_owned()]);
        let text = render(&many, "id", Path::new("/p"), Some("stats\n\n"));
        assert!(text.starts_with("# Review: r — 2 files\n"));
        assert!(text.contains("## Files to Review\n\n- @a\n- @b/c\n\n## Unchanged Matching Files\n\n"));
        assert!(text.contains("\n\n- @d\n\n## All Changed Files\n\n"));
        assert!(text.contains("\n\n- a\n- b/c\n- z\n\n## Precomputed Context\n\nstats\n\n## After Review\n\n"));
    }

    /// A reference to `dir/name`, labelled `name`, without a description or a boundary.
    fn reference(dir: &Path, name: &str) -> ReferenceFile {
        ReferenceFile { path: dir.join(name), label: name.to_owned(), description: None, boundary: None }
    }

    #[test]
    fn reference_files_are_inlined_with_language_and_description() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("spec.yml"), "a: 1\r\n").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
        let mut t = task(&["a.md"]);
        t.reference_files = vec![
            ReferenceFile {
                path: dir.path().join("spec.yml"),
                label: "spec.yml".to_owned(),
                description: Some("The spec".to_owned()),
                boundary: None,
            },
            reference(dir.path(), "notes.txt"),
            reference(dir.path(), "gone.md"),
        ];
        let text = render(&t, "id", Path::new("/p"), None);
        assert!(text.contains(
            "## Relevant File Contents\n\n### spec.yml\n\nThe spec\n\n```yaml\na: 1\n```\n\n### notes.txt\n\n```text\nhello\n```\n\n(could not inline gone.md: "
        ), "{text}");
        assert!(text.contains(")\n\n## Files to Review"));
    }

    #[test]
    fn reference_caps_truncate_and_omit() {
        let dir = tempfile::tempdir().unwrap();
        let big = "x".repeat(MAX_REFERENCE_BYTES - 10);
        std::fs::write(dir.path().join("big.md"), &big).unwrap();
        std::fs::write(dir.path().join("next.md"), "0123456789abcdef").unwrap();
        let reference = |name: &str| reference(dir.path(), name);
        let blocks = reference_blocks(&[reference("big.md"), reference("next.md"), reference("big.md")]);
        assert_eq!(blocks.len(), 4);
        assert!(blocks[1].ends_with("\n0123456789\n... (truncated: file is 16 bytes, budget left was 10)\n```\n"));
        assert_eq!(blocks[2], "_(1 more reference file(s) omitted due to size/count caps: big.md)_");

        std::fs::write(dir.path().join("small.py"), "pass\n").unwrap();
        let many: Vec<ReferenceFile> = (0..22).map(|_| reference("small.py")).collect();
        let blocks = reference_blocks(&many);
        assert_eq!(blocks.iter().filter(|b| b.starts_with("### small.py\n\n```python\npass\n```")).count(), 20);
        assert!(
            blocks.contains(
                &"_(2 more reference file(s) omitted due to size/count caps: small.py, small.py)_".to_owned()
            )
        );
    }

    #[test]
    fn precompute_outcomes_are_rendered() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("here.txt"), "").unwrap();
        let timeout = Duration::from_secs(30);
        assert_eq!(run_precompute("ls; echo done", dir.path(), timeout), "here.txt\ndone\n");
        assert_eq!(
            run_precompute("echo partial; echo broken >&2; exit 3", dir.path(), timeout),
            "**Precompute command failed** (exit code 3):\n```\nbroken\n```"
        );
        let err = run_precompute("true", &dir.path().join("no-such-dir"), timeout);
        assert!(err.starts_with("**Precompute command error**: "), "{err}");
    }

    #[test]
    fn precompute_timeout_kills_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_precompute("sleep 30 & sleep 30", dir.path(), Duration::from_millis(200));
        assert_eq!(out, "**Precompute command timed out** after 0.2s:\n`sleep 30 & sleep 30`");
    }

    #[test]
    fn many_commands_keep_their_order() {
        let dir = tempfile::tempdir().unwrap();
        let commands: Vec<(String, PathBuf)> =
            (0..20).map(|i| (format!("echo {i}"), dir.path().to_path_buf())).collect();
        let outputs = run_precompute_commands(&commands, Duration::from_secs(30));
        let expected: Vec<String> = (0..20).map(|i| format!("{i}\n")).collect();
        assert_eq!(outputs, expected);
    }
}
