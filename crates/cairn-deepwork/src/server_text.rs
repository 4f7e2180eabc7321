//! Texts the server shows agents outside tool results: the `instructions` sent at initialization and the
//! "issue detected" notice added to results while some job fails to load.

use std::sync::Arc;

use crate::discovery::LoadError;
use crate::host_names::HostNames;
use crate::job::JobDefinition;
use crate::platform_text;

/// Longest workflow list put into the instructions before falling back to a pointer at `get_workflows`.
const MAX_INSTRUCTIONS_CHARS: usize = 2048;

/// The instructions' first line, which hosts show as the server's summary.
const SUMMARY: &str =
    "DeepWork runs this project's multi-step workflows one step at a time, each behind a quality gate.";

/// How the server is used, for `platform` (where the session id comes from differs).
fn about(platform: &str) -> String {
    format!(
        "## Using DeepWork

**Session id**: {}

**Steps**: `start_workflow` returns the first step; do it, then call `finished_step` with its outputs \
(project-relative paths, or strings). `needs_work`: run the listed review tasks, fix, call again; `next_step`: go on; \
`workflow_complete`: done. Starting a workflow while one is active nests it; `abort_workflow` cancels, `go_to_step` \
goes back.",
        platform_text::session_id_hint(platform)
    )
}

/// The suggestion shown under a job that fails to load.
fn suggestion(error: &LoadError, names: &HostNames) -> String {
    format!(
        "The invalid file is {}/job.yml. If you edited that file this session, fix it directly. If you did not edit \
         it, the project may need the `repair` workflow of `deepwork_jobs` ({}) to migrate legacy formats.",
        error.job_dir.display(),
        names.start_hint("deepwork_jobs", "repair")
    )
}

/// One line per broken job: `- **name**: error` and the suggestion below it.
pub(crate) fn format_issues(errors: &[LoadError], names: &HostNames) -> String {
    errors
        .iter()
        .map(|e| format!("- **{}**: {}\n  {}", e.job_name, e.error, suggestion(e, names)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The error text `get_workflows` reports for a broken job: the error and what to do about it.
pub(crate) fn error_with_suggestion(error: &LoadError, names: &HostNames) -> String {
    format!("{}\n{}", error.error, suggestion(error, names))
}

/// The `issue_detected` text, when some job fails to load.
pub(crate) fn issue_detected(errors: &[LoadError], names: &HostNames) -> Option<String> {
    (!errors.is_empty()).then(|| {
        format!(
            "\n\n---\n**IMPORTANT: ISSUE DETECTED.** Suggest repairing this immediately to the user.\n\n{}",
            format_issues(errors, names)
        )
    })
}

/// The server `instructions` for `platform`: a one-line summary, then problems, else the available workflows (or a
/// pointer to `get_workflows` when that list would be long), then how the server is used.
pub(crate) fn server_instructions(
    jobs: &[Arc<JobDefinition>],
    errors: &[LoadError],
    names: &HostNames,
    platform: &str,
) -> String {
    let about = about(platform);
    if !errors.is_empty() {
        return format!(
            "{SUMMARY}\n\n## **IMPORTANT: ISSUE DETECTED**\n\nSuggest repairing this immediately to the user.\n\n{}\n\n\
             {about}",
            format_issues(errors, names)
        );
    }
    if jobs.is_empty() {
        return format!("{SUMMARY}\n\n{about}");
    }
    let lines: Vec<String> = jobs
        .iter()
        .map(|job| {
            let workflows: Vec<&str> = job.workflows.keys().map(String::as_str).collect();
            format!("- **{}** ({}): {}", job.name, workflows.join(", "), job.summary)
        })
        .collect();
    let start = match names.command("deepwork") {
        Some(command) => format!("use `{command}`"),
        None => format!("call `{}`", names.tool("start_workflow")),
    };
    let full = format!(
        "{SUMMARY}\n\n## Available Workflows\n\nIf the user wants to do something matching these, {start} to start \
         the workflow.\n\n{}\n\n{about}",
        lines.join("\n")
    );
    if full.chars().count() <= MAX_INSTRUCTIONS_CHARS {
        return full;
    }
    format!(
        "{SUMMARY}\n\n## Available Workflows\n\nCall `get_workflows` to see all available workflows and use them for \
         anything the user requests that seems related.\n\n{about}"
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::job::parse_job;

    /// cairn's standard jobs, parsed from their files.
    fn standard_jobs() -> Vec<Arc<JobDefinition>> {
        ["deepplan", "deepwork_jobs", "deepwork_reviews"]
            .iter()
            .map(|name| {
                let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("standard_jobs").join(name);
                let text = std::fs::read_to_string(dir.join("job.yml")).unwrap();
                Arc::new(parse_job(&text, &dir).unwrap())
            })
            .collect()
    }

    /// A project job with a summary of `summary_chars` characters and two workflows.
    fn project_job(name: &str, summary_chars: usize) -> Arc<JobDefinition> {
        let summary = "s".repeat(summary_chars);
        let text = format!(
            "name: {name}\nsummary: {summary}\nstep_arguments: []\nworkflows:\n  build:\n    summary: b\n    steps:\n      \
             - {{name: a, instructions: A}}\n  check:\n    summary: c\n    steps:\n      - {{name: a, instructions: A}}\n"
        );
        Arc::new(parse_job(&text, Path::new("/p")).unwrap())
    }

    #[test]
    fn a_typical_project_gets_its_workflows_listed_within_deepworks_budget() {
        // Five jobs of their own with 100-character summaries, beside the standard jobs, in either set-up.
        let mut jobs: Vec<_> = (0..5).map(|i| project_job(&format!("project_job_{i}"), 100)).collect();
        jobs.extend(standard_jobs());
        for names in [HostNames::default(), HostNames::new(Some("cairn"), None)] {
            let text = server_instructions(&jobs, &[], &names, "claude");
            assert!(text.chars().count() <= MAX_INSTRUCTIONS_CHARS, "{}", text.len());
            assert!(text.contains("- **project_job_4** (build, check): sss"), "{text}");
            assert!(text.contains("- **deepwork_jobs** (new_job, repair, learn, shared_jobs): "), "{text}");
        }
        // A long list gives way to a pointer at get_workflows.
        let many: Vec<_> = (0..20).map(|i| project_job(&format!("job_{i}"), 100)).collect();
        let text = server_instructions(&many, &[], &HostNames::default(), "claude");
        assert!(text.contains("Call `get_workflows` to see all available workflows") && !text.contains("- **job_0**"));
        assert!(text.starts_with(&format!("{SUMMARY}\n\n")) && text.ends_with(&about("claude")));
    }
}
