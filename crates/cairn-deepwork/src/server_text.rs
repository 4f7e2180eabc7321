//! Texts the server shows agents outside tool results: the `instructions` sent at initialization and the
//! "issue detected" notice added to results while some job fails to load.

use std::sync::Arc;

use crate::discovery::LoadError;
use crate::job::JobDefinition;

/// Longest workflow list put into the instructions before falling back to a pointer at `get_workflows`.
const MAX_INSTRUCTIONS_CHARS: usize = 2048;

const ABOUT: &str = "# DeepWork Workflow Server

Runs multi-step workflows (jobs defined in `.deepwork/jobs/<job>/job.yml`) one step at a time, with a quality gate \
before each step may advance.

**Session identity**: every workflow call takes a `session_id`. On Claude Code pass `CLAUDE_CODE_SESSION_ID` from your \
startup context (and `CLAUDE_CODE_AGENT_ID` as `agent_id` when you are a sub-agent). Elsewhere, leave it out of \
`start_workflow` and reuse the `begin_step.session_id` it returns.

**How to run a workflow**
1. `get_workflows` lists jobs and their workflows.
2. `start_workflow` returns the first step's instructions, inputs and expected outputs.
3. Do the step, then call `finished_step` with its outputs (file paths relative to the project root, or strings) and \
a short `work_summary`.
4. `needs_work`: follow the feedback (launch the review tasks it lists) and call `finished_step` again. `next_step`: \
carry on with the new instructions. `workflow_complete`: done, read `post_workflow_instructions`.

Starting a workflow while another is active nests it; finishing or aborting it (`abort_workflow`) returns to the \
parent. `go_to_step` goes back to an earlier step and clears the progress from there on.

**Reviews**: `get_review_instructions` returns review tasks for the files changed on this branch; \
`mark_review_as_passed` records a passed review so it is skipped while the files stay the same.";

/// The suggestion shown under a job that fails to load.
fn suggestion(error: &LoadError) -> String {
    format!(
        "The invalid file is {}/job.yml. If you edited that file this session, fix it directly. If you did not edit \
         it, the project may need `/deepwork repair` to migrate legacy formats.",
        error.job_dir.display()
    )
}

/// One line per broken job: `- **name**: error` and the suggestion below it.
pub(crate) fn format_issues(errors: &[LoadError]) -> String {
    errors
        .iter()
        .map(|e| format!("- **{}**: {}\n  {}", e.job_name, e.error, suggestion(e)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The error text `get_workflows` reports for a broken job: the error and what to do about it.
pub(crate) fn error_with_suggestion(error: &LoadError) -> String {
    format!("{}\n{}", error.error, suggestion(error))
}

/// The `issue_detected` text, when some job fails to load.
pub(crate) fn issue_detected(errors: &[LoadError]) -> Option<String> {
    (!errors.is_empty()).then(|| {
        format!(
            "\n\n---\n**IMPORTANT: ISSUE DETECTED.** Suggest repairing this immediately to the user.\n\n{}",
            format_issues(errors)
        )
    })
}

/// The server `instructions`: problems first, else the available workflows (or a pointer to `get_workflows` when
/// that list would be long), then how the server is used.
pub(crate) fn server_instructions(jobs: &[Arc<JobDefinition>], errors: &[LoadError]) -> String {
    if !errors.is_empty() {
        return format!(
            "## **IMPORTANT: ISSUE DETECTED**\n\nSuggest repairing this immediately to the user.\n\n{}\n\n{ABOUT}",
            format_issues(errors)
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
    let full = format!(
        "## Available Workflows\n\nThis project uses DeepWork. If the user wants to do something matching these, use \
         `/deepwork` to start the workflow.\n\n{}\n\n{ABOUT}",
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
