//! Texts the server shows agents outside tool results: the `instructions` sent at initialization and the
//! "issue detected" notice added to results while some job fails to load.

use std::sync::Arc;

use crate::discovery::LoadError;
use crate::host_names::HostNames;
use crate::job::JobDefinition;

/// Longest workflow list put into the instructions before falling back to a pointer at `get_workflows`.
const MAX_INSTRUCTIONS_CHARS: usize = 2048;

const ABOUT: &str = "# DeepWork Workflow Server

Multi-step jobs (`.deepwork/jobs/<job>/job.yml`), run one step at a time behind quality gates.

**Session id**: pass `CLAUDE_CODE_SESSION_ID` from your context as `session_id` (and `CLAUDE_CODE_AGENT_ID` as \
`agent_id` in a sub-agent). Without one, leave `session_id` out of `start_workflow` and pass the \
`begin_step.session_id` it returns to every later call.

**Steps**: `get_workflows` lists the jobs; `start_workflow` returns the first step; do it, then call `finished_step` \
with its outputs (paths relative to the project root, or strings) and a `work_summary`. `needs_work`: run the review \
tasks it lists, fix, call again. `next_step`: go on. `workflow_complete`: done.

Starting a workflow while one is active nests it; `abort_workflow` cancels, `go_to_step` goes back. \
`get_review_instructions` reviews changed files; `mark_review_as_passed` records a pass.";

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

/// The server `instructions`: problems first, else the available workflows (or a pointer to `get_workflows` when
/// that list would be long), then how the server is used.
pub(crate) fn server_instructions(jobs: &[Arc<JobDefinition>], errors: &[LoadError], names: &HostNames) -> String {
    if !errors.is_empty() {
        return format!(
            "## **IMPORTANT: ISSUE DETECTED**\n\nSuggest repairing this immediately to the user.\n\n{}\n\n{ABOUT}",
            format_issues(errors, names)
        );
    }
    if jobs.is_empty() {
        return ABOUT.to_owned();
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
        "## Available Workflows\n\nThis project uses DeepWork. If the user wants to do something matching these, \
         {start} to start the workflow.\n\n{}\n\n{ABOUT}",
        lines.join("\n")
    );
    if full.chars().count() <= MAX_INSTRUCTIONS_CHARS {
        return full;
    }
    format!(
        "## Available Workflows\n\nThis project has DeepWork workflows installed. Call `get_workflows` to see all \
         available workflows and use them for anything the user requests that seem related.\n\n{ABOUT}"
    )
}
