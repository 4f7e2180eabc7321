//! The list of pending reviews as the agent receives it (spec §9.8).
//!
//! Platform `claude` gets DeepWork's format: two fixed lines, a blank line, then per task a `description:` line and
//! TAB-indented `subagent_type:` and `prompt: "@<instruction file>"` lines, blocks separated by a blank line. The
//! prompt path is relative to the reference root (see [`crate::changed_files::reference_root`]), so Claude Code expands the `@` reference.
//!
//! Every other platform gets a plain list instead of an error: one introductory sentence, then per task a
//! `- Review <name>` item with an indented `instructions: <path>` line (same relative path, without `@`, since other
//! platforms do not expand it) and, when the rule names an agent for that platform, an `agent: <name>` line.
//!
//! The description is `Review <prefix><rule name>`, where the prefix is `<directory name>/` of the rule's defining
//! file when that file is not directly in the project root (`src/.deepreview` → `src/`, a job's `job.yml` → the job
//! folder's name, a named DeepSchema → the schema folder's name).

use std::path::Path;

use super::PendingReview;
use super::instructions::slash_path;
use crate::review_rule::ReviewTask;

/// The text returned when no review is pending.
pub const NO_TASKS: &str = "No review tasks to execute.";

/// The pending reviews formatted for `platform`; [`NO_TASKS`] when there are none. A Claude task whose rule names
/// no agent runs in `default_agent` (the reviewer agent the host has, see [`crate::HostNames::reviewer_agent`]).
///
/// `ref_root` is the directory the agent resolves `@` paths against (usually [`crate::changed_files::reference_root`]`(root)`).
pub fn format_tasks(pending: &[PendingReview], platform: &str, default_agent: &str, root: &Path, ref_root: &Path) -> String {
    if pending.is_empty() {
        return NO_TASKS.to_owned();
    }
    let mut lines: Vec<String> = Vec::new();
    if platform == "claude" {
        lines.push("Invoke the following list of Agents in parallel.".to_owned());
        lines.push(
            "IMPORTANT: Do NOT read the prompt files yourself. Pass the prompt field directly to each agent — the \
             @file references are expanded automatically.\n"
                .to_owned(),
        );
        for review in pending {
            lines.push(format!(
                "description: Review {}{}",
                description_prefix(&review.task, root),
                review.task.rule_name
            ));
            lines.push(format!("\tsubagent_type: {}", review.task.agent.as_deref().unwrap_or(default_agent)));
            lines.push(format!("\tprompt: \"@{}\"", relative_to(&review.instruction_file, ref_root)));
            lines.push(String::new());
        }
    } else {
        lines.push(
            "Run the following reviews, in parallel if you can hand work to sub-agents, otherwise one after another. \
             For each review, read the instruction file it names and carry out the review described there.\n"
                .to_owned(),
        );
        for review in pending {
            lines.push(format!("- Review {}{}", description_prefix(&review.task, root), review.task.rule_name));
            lines.push(format!("  instructions: {}", relative_to(&review.instruction_file, ref_root)));
            if let Some(agent) = &review.task.agent {
                lines.push(format!("  agent: {agent}"));
            }
            lines.push(String::new());
        }
    }
    lines.join("\n")
}

/// `<directory name>/` of the task's defining file, or nothing when that file is directly in `root`.
fn description_prefix(task: &ReviewTask, root: &Path) -> String {
    let Some(parent) = task.source_file.parent() else { return String::new() };
    if parent.as_os_str().is_empty() || same_path(parent, root) {
        return String::new();
    }
    match parent.file_name() {
        Some(name) => format!("{}/", name.to_string_lossy()),
        None => String::new(),
    }
}

/// Whether two paths name the same directory (spelled alike, or alike once symbolic links are resolved).
fn same_path(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}

/// `path` relative to `base` with `/` separators; the absolute path when it is not inside `base`.
fn relative_to(path: &Path, base: &Path) -> String {
    if let Ok(relative) = path.strip_prefix(base) {
        return slash_path(relative);
    }
    if let (Ok(path), Ok(base)) = (path.canonicalize(), base.canonicalize())
        && let Ok(relative) = path.strip_prefix(&base)
    {
        return slash_path(relative);
    }
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn pending(rule: &str, source: &str, agent: Option<&str>, id: &str) -> PendingReview {
        PendingReview {
            task: ReviewTask {
                rule_name: rule.to_owned(),
                files: vec!["a.md".to_owned()],
                instructions: String::new(),
                agent: agent.map(str::to_owned),
                reference_files: Vec::new(),
                unchanged_matching_files: Vec::new(),
                all_changed_files: None,
                inline_content: None,
                precompute: None,
                source_file: PathBuf::from(source),
                source_line: 1,
            },
            review_id: id.to_owned(),
            instruction_file: PathBuf::from(format!("/repo/proj/.deepwork/tmp/review_instructions/{id}.md")),
        }
    }

    #[test]
    fn claude_format_byte_for_byte() {
        let root = Path::new("/repo/proj");
        let tasks = [
            pending("md", "/repo/proj/.deepreview", None, "md--a.md--111111111111"),
            pending("sec", "/repo/proj/src/.deepreview", Some("security-expert"), "sec--a.md--222222222222"),
        ];
        let expected = "Invoke the following list of Agents in parallel.\n\
            IMPORTANT: Do NOT read the prompt files yourself. Pass the prompt field directly to each agent \u{2014} \
            the @file references are expanded automatically.\n\
            \n\
            description: Review md\n\
            \tsubagent_type: deepwork:reviewer\n\
            \tprompt: \"@.deepwork/tmp/review_instructions/md--a.md--111111111111.md\"\n\
            \n\
            description: Review src/sec\n\
            \tsubagent_type: security-expert\n\
            \tprompt: \"@.deepwork/tmp/review_instructions/sec--a.md--222222222222.md\"\n";
        assert_eq!(format_tasks(&tasks, "claude", "deepwork:reviewer", root, root), expected);
    }

    #[test]
    fn claude_format_outside_sources_and_subdirectory_roots() {
        // A standard schema (defined outside the root) and a project in a subdirectory of the repository.
        let tasks = [pending("job_yml DeepSchema Compliance", "/opt/std/job_yml/deepschema.yml", None, "x")];
        let got = format_tasks(&tasks, "claude", "deepwork:reviewer", Path::new("/repo/proj"), Path::new("/repo"));
        assert!(
            got.ends_with(
                "automatically.\n\ndescription: Review job_yml/job_yml DeepSchema Compliance\n\
                 \tsubagent_type: deepwork:reviewer\n\tprompt: \"@proj/.deepwork/tmp/review_instructions/x.md\"\n"
            ),
            "{got}"
        );
    }

    #[test]
    fn no_tasks() {
        assert_eq!(format_tasks(&[], "claude", "general-purpose", Path::new("/r"), Path::new("/r")), "No review tasks to execute.");
        assert_eq!(format_tasks(&[], "gemini", "general-purpose", Path::new("/r"), Path::new("/r")), NO_TASKS);
    }

    #[test]
    fn other_platforms_get_a_plain_list() {
        let root = Path::new("/repo/proj");
        let tasks = [
            pending("md", "/repo/proj/.deepreview", None, "m"),
            pending("sec", "/repo/proj/src/.deepreview", Some("auditor"), "s"),
        ];
        let text = format_tasks(&tasks, "gemini", "general-purpose", root, root);
        assert!(text.starts_with("Run the following reviews"), "{text}");
        assert!(text.ends_with(
            "\n\n- Review md\n  instructions: .deepwork/tmp/review_instructions/m.md\n\n- Review src/sec\n  \
             instructions: .deepwork/tmp/review_instructions/s.md\n  agent: auditor\n"
        ));
        assert!(!text.contains('@'));
    }
}
