//! How roscoe commands end: the exit codes (documented in `--help`), and [`Exit`], the error a command returns to
//! end with one of them. A facade error keeps its message and code (`Error: Run not found. (not_found)`); its exit
//! code says whether the command line was at fault (2) or the operation failed (1).

use std::fmt;

use cairn_roscoe::Error;

/// The exit codes of every roscoe command, for `roscoe --help`.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  success (`run`: the run completed)
  1  failure (`run`: the run failed or was cancelled, Ctrl-C included)
  2  usage error: bad arguments or input, unknown workflow or run
  3  the run waits: for a person, for a larger budget, or for a host to answer an AI step no provider serves
  130  `runs watch` stopped with Ctrl-C (the run is left as it is)";

/// The exit codes of `roscoe run` (and of `runs resume` / `retry` / `watch`), for its `--help`.
pub const RUN_EXIT_CODES: &str = "\
Exit codes:
  0  the run completed
  1  the run failed or was cancelled
  2  usage error: bad arguments or input, unknown workflow
  3  the run waits: for a person (a human step, when standard input is not a terminal), for its budget to be
     raised, or for a host to answer an AI step no provider serves; go on in the web UI or with `roscoe runs resume`

Ctrl-C while the run executes cancels it (its running script is stopped) and exits 1; Ctrl-C at a human step's
question leaves the run paused and exits 3. With --detach the command returns at once with the run id and the run
is driven in the background.";

/// Completed, or success.
pub const OK: u8 = 0;
/// Failed or cancelled, or an error.
pub const FAILED: u8 = 1;
/// A usage error.
pub const USAGE: u8 = 2;
/// Waiting for a person or an AI step's answer.
pub const WAITING: u8 = 3;
/// `runs watch` interrupted.
pub const INTERRUPTED: u8 = 130;

/// Ends a command with `code`, after printing `message` (if any) as `Error: …` on stderr.
#[derive(Debug)]
pub struct Exit {
    /// The process's exit code.
    pub code: u8,
    /// What to print, when the command has not said it already.
    pub message: Option<String>,
}

impl Exit {
    /// Ends with `code`, everything already said.
    pub fn with(code: u8) -> Exit {
        Exit { code, message: None }
    }

    /// A usage error (2) saying `message`.
    pub fn usage(message: impl Into<String>) -> Exit {
        Exit { code: USAGE, message: Some(message.into()) }
    }

    /// A facade error: its message and code, exit 2 when the command line named something wrong, else 1. The
    /// facade's hints name the MCP tools an agent would call; here they name the commands that do the same.
    pub fn from_facade(error: &Error) -> Exit {
        let code = if is_usage(error.as_code()) { USAGE } else { FAILED };
        let mut message = format!("{error} ({})", error.as_code());
        for (tool, command) in TOOL_HINTS {
            message = message.replace(tool, command);
        }
        Exit { code, message: Some(message) }
    }
}

/// The facade's hints that name a tool, and what a terminal's user types instead.
const TOOL_HINTS: [(&str, &str); 3] = [
    ("call list_workflows to see", "run `roscoe workflows list` to see"),
    ("Call list_docs for the slugs", "Run `roscoe docs list` for the slugs"),
    ("call get_run_status and answer", "run `roscoe runs show` and answer"),
];

/// Whether a facade error code means the command line named something wrong.
pub(super) fn is_usage(code: &str) -> bool {
    matches!(
        code,
        "invalid_input"
            | "not_found"
            | "workflow_not_found"
            | "invalid_transition"
            | "CWD_REQUIRED"
            | "CWD_GLOBAL_CONFLICT"
            | "CWD_INVALID"
            | "invalid_id"
            | "no_repo_source"
            | "invalid_config"
    )
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.message {
            Some(message) => f.write_str(message),
            None => write!(f, "exit code {}", self.code),
        }
    }
}

impl std::error::Error for Exit {}
