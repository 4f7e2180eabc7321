//! The agent hooks behind `deepwork hook <name>` (spec §14.4): they read the hook event JSON the agent's CLI sends
//! on stdin and answer with hook JSON, in plain Rust, so no `bash`, `jq` or Python is needed (spec §17 #245).
//!
//! * [`Hook::DeepschemaWrite`] runs after a file is written or edited. It finds the DeepSchemas governing the file —
//!   named schemas whose `matchers` match the path relative to the hook's `cwd`, and the anonymous schema
//!   `.deepschema.<file name>.yml` beside it — tells the agent which schemas apply, validates the file (parsed as YAML,
//!   which covers JSON) against each schema's JSON Schema, and runs each `verification_bash_command` as
//!   `bash -c <command> -- <absolute file>` from the `cwd` with a 30 s limit ([`VERIFICATION_TIMEOUT`]). Failures are
//!   appended to the note under a `CRITICAL:` line. A written file or a project's JSON Schema that leads out of the
//!   project (or is not a regular file) is not read; the failure says why.
//! * [`Hook::PostCommitReminder`] runs after a shell command containing `git commit`. It lists the files of the `HEAD`
//!   commit and builds the review tasks the project's non-catch-all rules (`.deepreview` and DeepSchema rules, as
//!   DeepWork does) ask for over them. When every task already has a `.passed` marker the agent is told no re-review
//!   is needed; otherwise (also when git fails) it is reminded to offer the user a review.
//!
//! * [`Hook::StartupContext`] runs when a session or a sub-agent starts: the session id (and agent id) into the
//!   model's context, and after a compaction the session's active workflows (`hooks/startup_context.rs`).
//!
//! A hook with nothing to say answers `{}`. Context goes to `hookSpecificOutput.additionalContext` with the
//! platform's after-tool event name (`PostToolUse` for Claude Code, `AfterTool` for Gemini CLI, chosen by
//! `DEEPWORK_HOOK_PLATFORM`). Input that is empty or not JSON is treated as an empty event (so `{}`); an event whose
//! `hook_event_name` is present but is not an after-tool event is ignored. Problems with the written file or a schema
//! are part of the context; a hook never fails: an internal error (a panic here, or the caller failing to set up the
//! service, see [`error_output`]) becomes a `{"decision": "block", "reason": "## Hook Script Error…"}` answer, and the
//! caller exits 0.
//!
//! Differences from DeepWork 0.14.0: a missing `hook_event_name` does not make the hook ignore the event; the files of
//! a commit are taken relative to the `cwd` (a project in a subdirectory of the repository works), deleted files
//! are left out and the first commit of a repository counts too; a verification command runs with `sh` when `bash`
//! is not installed; an unknown `DEEPWORK_HOOK_PLATFORM` means Claude Code instead of an error.

mod startup_context;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::changed_files::git_command;
use crate::deepschema::{DeepSchema, ResolvedPath, schema_folders};
use crate::confined;
use crate::process::{Finished, run_with_timeout};
use crate::glob::Glob;
use crate::host_names::HostNames;
use crate::confined::normalize;
use crate::review::{build_tasks, instructions_dir, review_id};
use crate::service::Deepwork;
use cairn_yaml as yaml;

/// How long one verification command may run.
pub const VERIFICATION_TIMEOUT: Duration = Duration::from_secs(30);

/// The most output of a failed verification command quoted back to the agent (the end is kept).
const MAX_COMMAND_OUTPUT: usize = 4000;

/// Context given after a commit whose reviews have all passed.
pub const ALL_PASSED: &str = "No re-review needed - all reviews passed for committed files";

/// Context given after a commit that may need a review, naming how a review is started where the host has `names`
/// (and, on Claude Code, the tool for asking the user).
pub fn review_reminder(names: &HostNames, platform: HookPlatform) -> String {
    let how = match names.command("review") {
        Some(command) => format!("reviewed with `{command}`, and run it if they agree"),
        None => format!(
            "reviewed, and if they agree run the review tasks `{}` hands out",
            names.tool("get_review_instructions")
        ),
    };
    let ask = match platform {
        HookPlatform::Claude => "ask the user (with the AskUserQuestion tool where you have it)",
        HookPlatform::Gemini => "ask the user",
    };
    format!(
        "You just made a commit. Unless you reviewed these changes recently, {ask} whether they want the committed \
         changes {how}."
    )
}

/// Heading of the text appended when validation fails.
const VALIDATION_FAILED: &str = "CRITICAL: DeepSchema validation failed when it tried to verify this change.";

/// A hook `deepwork hook <name>` can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    /// After Write/Edit: DeepSchema notes and validation.
    DeepschemaWrite,
    /// After a `git commit`: remind the agent to offer a review unless every review passed.
    PostCommitReminder,
    /// When a session or sub-agent starts: its ids, and after a compaction its active workflows.
    StartupContext,
}

impl Hook {
    /// Every hook, in the order they are listed to users.
    pub const ALL: [Hook; 3] = [Hook::DeepschemaWrite, Hook::PostCommitReminder, Hook::StartupContext];

    /// The hook called `name`.
    pub fn from_name(name: &str) -> Option<Hook> {
        Hook::ALL.into_iter().find(|hook| hook.name() == name)
    }

    /// The hook's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Hook::DeepschemaWrite => "deepschema_write",
            Hook::PostCommitReminder => "post_commit_reminder",
            Hook::StartupContext => "startup_context",
        }
    }

    /// The message for a name that is not a hook.
    pub fn not_found(name: &str) -> String {
        let names: Vec<&str> = Hook::ALL.iter().map(|hook| hook.name()).collect();
        format!("Hook '{name}' not found. Available hooks: {}.", names.join(", "))
    }
}

/// The agent CLI calling a hook, which decides event and tool names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookPlatform {
    /// Claude Code (`PostToolUse`, `Write`, `Edit`, `Bash`).
    Claude,
    /// Gemini CLI (`AfterTool`, `write_file`, `replace`, `run_shell_command`).
    Gemini,
}

impl HookPlatform {
    /// The platform named by `DEEPWORK_HOOK_PLATFORM`: `gemini` is Gemini CLI, anything else Claude Code.
    pub fn from_setting(value: Option<&str>) -> HookPlatform {
        match value.map(str::trim) {
            Some(v) if v.eq_ignore_ascii_case("gemini") => HookPlatform::Gemini,
            _ => HookPlatform::Claude,
        }
    }

    /// The name review rules use for the platform's agents.
    fn name(self) -> &'static str {
        match self {
            HookPlatform::Claude => "claude",
            HookPlatform::Gemini => "gemini",
        }
    }

    /// The event that follows a tool call.
    fn after_tool_event(self) -> &'static str {
        match self {
            HookPlatform::Claude => "PostToolUse",
            HookPlatform::Gemini => "AfterTool",
        }
    }
}

/// Tools that write a file named by `tool_input.file_path` (both platforms' names, and DeepWork's normalized ones).
const WRITE_TOOLS: [&str; 5] = ["Write", "Edit", "MultiEdit", "write_file", "edit_file"];

/// Gemini CLI's edit tool.
const GEMINI_EDIT_TOOL: &str = "replace";

/// Tools that run a shell command named by `tool_input.command`.
const SHELL_TOOLS: [&str; 3] = ["Bash", "shell", "run_shell_command"];

/// After-tool event names of both platforms.
const AFTER_TOOL_EVENTS: [&str; 2] = ["PostToolUse", "AfterTool"];

/// The parts of a hook event the hooks read.
#[derive(Debug, Clone, Default)]
pub struct HookEvent {
    /// `hook_event_name`, when given.
    pub event: Option<String>,
    /// `cwd`, when given and not empty.
    pub cwd: Option<PathBuf>,
    /// `tool_name`.
    pub tool_name: String,
    /// `tool_input`.
    pub tool_input: Map<String, Value>,
    /// `session_id`.
    pub session_id: Option<String>,
    /// `source` (of a `SessionStart`: `startup`, `resume`, `clear`, `compact`).
    pub source: Option<String>,
    /// `agent_id` (of a sub-agent).
    pub agent_id: Option<String>,
}

impl HookEvent {
    /// Reads the event JSON; empty input, input that is not JSON or not an object, and fields of the wrong type read
    /// as absent.
    pub fn parse(text: &str) -> HookEvent {
        let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) else {
            return HookEvent::default();
        };
        let string = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_owned);
        HookEvent {
            event: string("hook_event_name"),
            cwd: string("cwd").filter(|c| !c.is_empty()).map(PathBuf::from),
            tool_name: string("tool_name").unwrap_or_default(),
            tool_input: map.get("tool_input").and_then(Value::as_object).cloned().unwrap_or_default(),
            session_id: string("session_id"),
            source: string("source"),
            agent_id: string("agent_id"),
        }
    }

    /// Whether this is an after-tool event (or does not say).
    fn is_after_tool(&self) -> bool {
        self.event.as_deref().is_none_or(|event| AFTER_TOOL_EVENTS.contains(&event))
    }

    fn input_str(&self, key: &str) -> &str {
        self.tool_input.get(key).and_then(Value::as_str).unwrap_or_default()
    }
}

/// The answer of a hook that hit an internal error: a block decision whose reason says what failed.
pub fn error_output(hook_name: &str, error: &str) -> Value {
    json!({
        "decision": "block",
        "reason": format!(
            "## Hook Script Error\n\nThe deepwork hook `{hook_name}` could not finish.\n\nError: {error}"
        ),
    })
}

/// The answer of an after-tool hook: `context` for the agent, or `{}` when it has nothing to say.
fn after_tool(platform: HookPlatform, context: Option<String>) -> Value {
    match context {
        Some(context) => json!({
            "hookSpecificOutput": {"hookEventName": platform.after_tool_event(), "additionalContext": context}
        }),
        None => json!({}),
    }
}

/// The answer of `startup_context` when the service could not be set up: the ids all the same, and `error` where
/// the active workflows would be.
pub fn startup_context_without_service(input: &str, error: &str) -> Value {
    let event = HookEvent::parse(input);
    let stack = startup_context::wants_stack(&event).map(|_| Err(error.to_owned()));
    startup_context::answer(&event, stack)
}

impl Deepwork {
    /// Runs `hook` on the event JSON `input` and returns the JSON to print. `fallback_cwd` stands in for a missing
    /// `cwd`. Never fails: errors and panics become [`error_output`].
    pub fn run_hook(&self, hook: Hook, input: &str, platform: HookPlatform, fallback_cwd: &Path) -> Value {
        let event = HookEvent::parse(input);
        // A relative `cwd` is taken from the fallback directory.
        let root = normalize(&fallback_cwd.join(event.cwd.as_deref().unwrap_or(Path::new(""))));
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match hook {
            Hook::DeepschemaWrite => after_tool(platform, self.deepschema_write(&event, &root)),
            Hook::PostCommitReminder => after_tool(platform, self.post_commit_reminder(&event, platform, &root)),
            Hook::StartupContext => {
                let stack = startup_context::wants_stack(&event).map(|session| Ok(self.session_stack(&root, session)));
                startup_context::answer(&event, stack)
            }
        }));
        match outcome {
            Ok(answer) => answer,
            Err(panic) => {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unexpected internal error".to_owned());
                error_output(hook.name(), &format!("internal error: {message}"))
            }
        }
    }

    /// `deepschema_write` for the project at `root`: the context for the agent, if any schema governs the written
    /// file. Problems with the file or a schema are part of the context.
    fn deepschema_write(&self, event: &HookEvent, root: &Path) -> Option<String> {
        let tool = event.tool_name.as_str();
        if !event.is_after_tool() || !(WRITE_TOOLS.contains(&tool) || tool == GEMINI_EDIT_TOOL) {
            return None;
        }
        let file_path = event.input_str("file_path");
        if file_path.is_empty() {
            return None;
        }
        let (relative, absolute) = locate(root, Path::new(file_path))?;

        let config = self.config();
        let folders = schema_folders(root, &config.standard_schemas, &config.additional_schema_folders);
        let set = self.deepschema_cache().load(root, &folders);
        let named = set.named.iter().filter(|schema| schema.matchers.iter().any(|m| Glob::new(m).is_match(&relative)));
        let anonymous = set.anonymous.iter().filter(|schema| schema.target.as_deref() == Some(absolute.as_path()));
        let schemas: Vec<&DeepSchema> = named.chain(anonymous).collect();
        if schemas.is_empty() {
            return None;
        }

        let notes: Vec<String> = schemas
            .iter()
            .map(|schema| {
                format!("Note: this file must conform to the DeepSchema at {}", shown(root, &schema.manifest))
            })
            .collect();
        let mut failures = Vec::new();
        for schema in &schemas {
            if let Some(json_schema) = &schema.json_schema {
                failures.extend(json_schema_failure(&absolute, json_schema, root));
            }
            for command in &schema.verification_bash_commands {
                failures.extend(verification_failure(command, &absolute, root, VERIFICATION_TIMEOUT));
            }
        }
        let mut context = notes.join("\n");
        if !failures.is_empty() {
            context.push_str(&format!("\n\n{VALIDATION_FAILED}\n\n{}", failures.join("\n")));
        }
        Some(context)
    }

    /// `post_commit_reminder` for the project at `root`: the context after a `git commit`, if the event is one.
    fn post_commit_reminder(&self, event: &HookEvent, platform: HookPlatform, root: &Path) -> Option<String> {
        if !event.is_after_tool()
            || !SHELL_TOOLS.contains(&event.tool_name.as_str())
            || !event.input_str("command").contains("git commit")
        {
            return None;
        }
        let Ok(files) = committed_files(root) else {
            return Some(review_reminder(&self.config().names, platform));
        };
        let rules = self.project_rules(root).rules;
        let tasks = build_tasks(&rules, &files, root, platform.name(), true);
        let dir = instructions_dir(root);
        let all_passed = tasks.iter().all(|task| dir.join(format!("{}.passed", review_id(task, root))).exists());
        Some(if all_passed { ALL_PASSED.to_owned() } else { review_reminder(&self.config().names, platform) })
    }
}

/// The written file relative to the normalized `root` (`/`-separated) and absolute; `None` when it lies outside
/// `root`.
fn locate(root: &Path, file: &Path) -> Option<(String, PathBuf)> {
    let absolute = normalize(&root.join(file));
    let relative = match absolute.strip_prefix(root) {
        Ok(relative) => relative.to_path_buf(),
        // The agent may name the file through another spelling of the root (a symbolic link such as /tmp on macOS).
        Err(_) => {
            let real_root = root.canonicalize().ok()?;
            let real_dir = absolute.parent()?.canonicalize().ok()?;
            real_dir.join(absolute.file_name()?).strip_prefix(&real_root).ok()?.to_path_buf()
        }
    };
    let parts: Vec<String> = relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if parts.is_empty() {
        return None;
    }
    Some((parts.join("/"), root.join(relative)))
}

/// `path` relative to `root` when inside it, else as it is.
fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).display().to_string()
}

/// Why `file` does not satisfy the JSON Schema `json_schema`, if it does not. Neither is read when it is not a regular
/// file or leads out of the project (a schema of cairn's own folders or of configured ones may lie anywhere).
fn json_schema_failure(file: &Path, json_schema: &ResolvedPath, root: &Path) -> Option<String> {
    let schema_shown = shown(root, &json_schema.absolute);
    let schema_text = match confined::read_text(&json_schema.absolute, json_schema.boundary.as_deref(), None) {
        Ok(text) => text,
        Err(err) => return Some(format!("Cannot read the JSON Schema {schema_shown}: {err}")),
    };
    let schema = match yaml::parse(&schema_text) {
        Ok(doc) if doc.value.is_object() || doc.value.is_boolean() => doc.value,
        Ok(_) => {
            return Some(format!("Cannot use the JSON Schema {schema_shown}: it is not a JSON Schema object"));
        }
        Err(err) => {
            return Some(format!("Cannot parse the JSON Schema {schema_shown}: {err}"));
        }
    };
    let validator = match jsonschema::validator_for(&schema) {
        Ok(validator) => validator,
        Err(err) => return Some(format!("Cannot use the JSON Schema {schema_shown}: {err}")),
    };
    let text = match confined::read_bytes(file, Some(root), None) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(_) => return Some("Cannot parse the file: it is not UTF-8 text".to_owned()),
        },
        Err(err) => return Some(format!("Cannot read the file: {err}")),
    };
    let value = match yaml::parse(&text) {
        Ok(doc) => doc.value,
        Err(err) => return Some(format!("Cannot parse the file as YAML or JSON: {err}")),
    };
    let problems: Vec<String> = validator
        .iter_errors(&value)
        .map(|err| {
            let at = err.instance_path().to_string();
            let at = if at.is_empty() { "the document".to_owned() } else { format!("`{at}`") };
            format!("- at {at}: {err}")
        })
        .collect();
    if problems.is_empty() {
        return None;
    }
    Some(format!("JSON Schema validation against {schema_shown} failed:\n{}", problems.join("\n")))
}

/// Why `command` rejected `file`, if it did: a non-zero exit, a timeout, or a failure to start.
fn verification_failure(command: &str, file: &Path, root: &Path, timeout: Duration) -> Option<String> {
    let build = |shell: &str| {
        let mut process = Command::new(shell);
        process.arg("-c").arg(command).arg("--").arg(file).current_dir(root);
        process
    };
    let ran = match run_limited(build("bash"), timeout) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => run_limited(build("sh"), timeout),
        other => other,
    };
    match ran {
        Ok(Some((status, _))) if status.success() => None,
        Ok(Some((status, output))) => {
            let code = status.code().map_or_else(|| "killed by a signal".to_owned(), |c| format!("exit code {c}"));
            let output = tail(output.trim(), MAX_COMMAND_OUTPUT);
            if output.is_empty() {
                Some(format!("Verification command `{command}` failed ({code}) without output."))
            } else {
                Some(format!("Verification command `{command}` failed ({code}):\n{output}"))
            }
        }
        Ok(None) => Some(format!(
            "Verification command `{command}` did not finish within {} s and was stopped.",
            timeout.as_secs_f64()
        )),
        Err(err) => Some(format!("Verification command `{command}` could not be started: {err}")),
    }
}

/// The last `max` bytes of `text` (on a character boundary), marked when cut.
fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[… output shortened …]\n{}", &text[start..])
}

/// Runs `command` with a time limit, collecting stdout and stderr into one text. `Ok(None)` when it ran past
/// `timeout` (it was killed, with everything it started).
fn run_limited(command: Command, timeout: Duration) -> std::io::Result<Option<(std::process::ExitStatus, String)>> {
    match run_with_timeout(command, timeout) {
        Finished::Exited(output) => {
            let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&output.stderr));
            Ok(Some((output.status, text)))
        }
        Finished::TimedOut => Ok(None),
        Finished::Failed(err) => Err(err),
    }
}

/// The files of the `HEAD` commit relative to `root` (files outside it dropped, deleted files left out), sorted.
fn committed_files(root: &Path) -> Result<Vec<String>, String> {
    let mut git = git_command(root);
    git.args(["diff-tree", "--no-commit-id", "--name-only", "-r", "-z", "--root", "--relative", "--diff-filter=d"])
        .arg("HEAD");
    let output = git.output().map_err(|err| format!("could not run git: {err}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_owned());
    }
    let mut files: Vec<String> = output
        .stdout
        .split(|b| *b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect();
    files.sort();
    files.dedup();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::Config;
    use std::process::Stdio;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A service without standard schemas, and a canonical project directory.
    fn setup() -> (Deepwork, tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let deepwork = Deepwork::new(Config {
            platform: "claude".to_owned(),
            standard_jobs: root.join("no-standard-jobs"),
            additional_job_folders: Vec::new(),
            standard_schemas: root.join("no-standard-schemas"),
            additional_schema_folders: Vec::new(),
            names: HostNames::default(),
        });
        (deepwork, dir, root)
    }

    fn event(root: &Path, tool: &str, input: Value) -> String {
        json!({"hook_event_name": "PostToolUse", "cwd": root, "tool_name": tool, "tool_input": input}).to_string()
    }

    fn context(output: &Value) -> &str {
        assert_eq!(output["hookSpecificOutput"]["hookEventName"], "PostToolUse", "{output}");
        output["hookSpecificOutput"]["additionalContext"].as_str().unwrap()
    }

    fn run(deepwork: &Deepwork, hook: Hook, input: &str) -> Value {
        deepwork.run_hook(hook, input, HookPlatform::Claude, Path::new("/nonexistent"))
    }

    const CONFIG_SCHEMA: &str = r#"summary: Service configuration
matchers: ["config/*.yml"]
json_schema_path: config.schema.json
verification_bash_command:
  - "grep -q '^name:' \"$1\" || { echo 'no name' >&2; exit 3; }"
"#;
    const CONFIG_JSON_SCHEMA: &str = r#"{"type": "object", "required": ["name"],
        "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}"#;

    fn schema_project(root: &Path) {
        write(root, ".deepwork/schemas/config/deepschema.yml", CONFIG_SCHEMA);
        write(root, ".deepwork/schemas/config/config.schema.json", CONFIG_JSON_SCHEMA);
    }

    #[test]
    fn hooks_are_found_by_name() {
        assert_eq!(Hook::from_name("deepschema_write"), Some(Hook::DeepschemaWrite));
        assert_eq!(Hook::from_name("post_commit_reminder"), Some(Hook::PostCommitReminder));
        assert_eq!(Hook::from_name("startup_context"), Some(Hook::StartupContext));
        assert_eq!(Hook::from_name("nope"), None);
        assert_eq!(
            Hook::not_found("nope"),
            "Hook 'nope' not found. Available hooks: deepschema_write, post_commit_reminder, startup_context."
        );
        assert_eq!(HookPlatform::from_setting(Some("gemini")), HookPlatform::Gemini);
        assert_eq!(HookPlatform::from_setting(Some("claude")), HookPlatform::Claude);
        assert_eq!(HookPlatform::from_setting(Some("other")), HookPlatform::Claude);
        assert_eq!(HookPlatform::from_setting(None), HookPlatform::Claude);
    }

    #[test]
    fn unreadable_or_unrelated_events_get_an_empty_answer() {
        let (deepwork, _dir, root) = setup();
        schema_project(&root);
        write(&root, "config/app.yml", "name: app\n");
        for input in ["", "not json", "[1, 2]", "{}"] {
            assert_eq!(run(&deepwork, Hook::DeepschemaWrite, input), json!({}), "{input:?}");
            assert_eq!(run(&deepwork, Hook::PostCommitReminder, input), json!({}), "{input:?}");
        }
        let file = json!({"file_path": "config/app.yml"});
        assert_eq!(run(&deepwork, Hook::DeepschemaWrite, &event(&root, "Read", file.clone())), json!({}));
        let pre = json!({"hook_event_name": "PreToolUse", "cwd": root, "tool_name": "Write", "tool_input": file});
        assert_eq!(run(&deepwork, Hook::DeepschemaWrite, &pre.to_string()), json!({}));
        let ls = json!({"command": "ls"});
        assert_eq!(run(&deepwork, Hook::PostCommitReminder, &event(&root, "Bash", ls)), json!({}));
        let commit = json!({"command": "git commit -m x"});
        assert_eq!(run(&deepwork, Hook::PostCommitReminder, &event(&root, "Write", commit)), json!({}));
    }

    #[test]
    fn a_matching_file_gets_a_note_and_passes_validation() {
        let (deepwork, _dir, root) = setup();
        schema_project(&root);
        write(&root, "config/app.yml", "name: app\nport: 80\n");
        let expected = "Note: this file must conform to the DeepSchema at .deepwork/schemas/config/deepschema.yml";
        for path in [json!("config/app.yml"), json!(root.join("config/app.yml")), json!("./config/../config/app.yml")] {
            let output = run(&deepwork, Hook::DeepschemaWrite, &event(&root, "Edit", json!({ "file_path": path })));
            assert_eq!(context(&output), expected, "{path}");
        }
        write(&root, "other/app.yml", "x: 1\n");
        let other = event(&root, "Write", json!({"file_path": "other/app.yml"}));
        assert_eq!(run(&deepwork, Hook::DeepschemaWrite, &other), json!({}));
        let outside = event(&root, "Write", json!({"file_path": "/etc/hosts"}));
        assert_eq!(run(&deepwork, Hook::DeepschemaWrite, &outside), json!({}));
    }

    #[test]
    fn validation_failures_are_reported_as_critical() {
        let (deepwork, _dir, root) = setup();
        schema_project(&root);
        write(&root, "config/app.yml", "port: eighty\n");
        let output =
            run(&deepwork, Hook::DeepschemaWrite, &event(&root, "Write", json!({"file_path": "config/app.yml"})));
        let text = context(&output);
        assert!(
            text.starts_with(
                "Note: this file must conform to the DeepSchema at .deepwork/schemas/config/deepschema.yml\n\n\
                 CRITICAL: DeepSchema validation failed when it tried to verify this change.\n\n\
                 JSON Schema validation against .deepwork/schemas/config/config.schema.json failed:\n"
            ),
            "{text}"
        );
        assert!(text.contains("- at `/port`: "), "{text}");
        assert!(text.contains("- at the document: "), "{text}");
        assert!(text.contains("failed (exit code 3):\nno name"), "{text}");

        write(&root, "config/app.yml", "name: [unclosed\n");
        let output =
            run(&deepwork, Hook::DeepschemaWrite, &event(&root, "Write", json!({"file_path": "config/app.yml"})));
        assert!(context(&output).contains("Cannot parse the file as YAML or JSON: "), "{output}");
    }

    #[test]
    fn an_anonymous_schema_beside_the_file_applies_with_inherited_checks() {
        let (deepwork, _dir, root) = setup();
        write(
            &root,
            ".deepwork/schemas/base/deepschema.yml",
            "verification_bash_command:\n  - \"test -s \\\"$1\\\"\"\n",
        );
        write(
            &root,
            "docs/.deepschema.guide.md.yml",
            "parent_deep_schemas: [base]\nrequirements:\n  r: It MUST exist.\n",
        );
        write(&root, "docs/guide.md", "# Guide\n");
        let input = event(&root, "Write", json!({"file_path": root.join("docs/guide.md")}));
        let output = run(&deepwork, Hook::DeepschemaWrite, &input);
        assert_eq!(context(&output), "Note: this file must conform to the DeepSchema at docs/.deepschema.guide.md.yml");

        write(&root, "docs/guide.md", "");
        let output = run(&deepwork, Hook::DeepschemaWrite, &input);
        assert!(
            context(&output).ends_with("Verification command `test -s \"$1\"` failed (exit code 1) without output.")
        );
        write(&root, "guide.md", "");
        let elsewhere = event(&root, "Write", json!({"file_path": "guide.md"}));
        assert_eq!(run(&deepwork, Hook::DeepschemaWrite, &elsewhere), json!({}));
    }

    #[test]
    fn gemini_events_are_understood_and_answered_in_kind() {
        let (deepwork, _dir, root) = setup();
        schema_project(&root);
        write(&root, "config/app.yml", "name: app\n");
        let input = json!({"hook_event_name": "AfterTool", "cwd": root, "tool_name": "write_file",
            "tool_input": {"file_path": "config/app.yml"}});
        let output = deepwork.run_hook(Hook::DeepschemaWrite, &input.to_string(), HookPlatform::Gemini, &root);
        assert_eq!(output["hookSpecificOutput"]["hookEventName"], "AfterTool");
        // Without `cwd` the fallback directory is the project root.
        let input = json!({"tool_name": "Write", "tool_input": {"file_path": "config/app.yml"}});
        let output = deepwork.run_hook(Hook::DeepschemaWrite, &input.to_string(), HookPlatform::Claude, &root);
        assert!(context(&output).starts_with("Note: "));
    }

    #[test]
    fn slow_verification_commands_are_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let failure = verification_failure("sleep 20", &dir.path().join("f"), dir.path(), Duration::from_millis(200));
        assert_eq!(
            failure.as_deref(),
            Some("Verification command `sleep 20` did not finish within 0.2 s and was stopped.")
        );
        let missing = dir.path().join("no-such-dir");
        assert!(
            verification_failure("true", Path::new("f"), &missing, VERIFICATION_TIMEOUT)
                .unwrap()
                .contains("could not be started")
        );
        assert_eq!(verification_failure("test \"$1\" = f", Path::new("f"), dir.path(), VERIFICATION_TIMEOUT), None);
    }

    #[test]
    fn long_output_keeps_its_end() {
        assert_eq!(tail("short", 10), "short");
        let cut = tail(&format!("{}end", "é".repeat(10)), 6);
        assert_eq!(cut, "[… output shortened …]\néend");
    }

    #[test]
    fn errors_become_a_block_decision() {
        let output = error_output("deepschema_write", "boom");
        assert_eq!(output["decision"], "block");
        let reason = output["reason"].as_str().unwrap();
        assert!(reason.starts_with("## Hook Script Error\n\n") && reason.ends_with("Error: boom"), "{reason}");
    }

    fn git(root: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", root.join(".git-home"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn post_commit_reminder_checks_the_passed_markers_of_the_commit() {
        let (deepwork, _dir, root) = setup();
        let commit = || event(&root, "Bash", json!({"command": "git add -A && git commit -m work"}));
        // Not a repository: the reminder.
        let reminder = review_reminder(&HostNames::default(), HookPlatform::Claude);
        assert_eq!(context(&run(&deepwork, Hook::PostCommitReminder, &commit())), reminder);

        write(&root, ".gitignore", ".git-home/\n.deepwork/tmp/\n");
        write(
            &root,
            ".deepreview",
            r#"md:
  description: d
  match:
    include: ["**/*.md"]
  review:
    strategy: individual
    instructions: Check it.
everything:
  description: d
  match:
    include: ["**/*"]
  review:
    strategy: matches_together
    instructions: Look.
"#,
        );
        write(&root, "a.md", "# A\n");
        write(&root, "b.txt", "b\n");
        git(&root, &["init", "-q", "-b", "main"]);
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "first"]);
        assert_eq!(committed_files(&root).unwrap(), [".deepreview", ".gitignore", "a.md", "b.txt"]);
        let reminder = review_reminder(&HostNames::default(), HookPlatform::Claude);
        assert_eq!(context(&run(&deepwork, Hook::PostCommitReminder, &commit())), reminder);

        // The catch-all rule is not waited for; the md review of a.md is.
        let rules = deepwork.project_rules(&root).rules;
        let tasks = build_tasks(&rules, &["a.md".to_owned()], &root, "claude", true);
        assert_eq!(tasks.len(), 1);
        crate::review::mark_passed(&root, &review_id(&tasks[0], &root)).unwrap();
        assert_eq!(context(&run(&deepwork, Hook::PostCommitReminder, &commit())), ALL_PASSED);

        // A commit touching no reviewed file needs nothing; deleted files are left out.
        std::fs::remove_file(root.join("a.md")).unwrap();
        write(&root, "c.txt", "c\n");
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "second"]);
        assert_eq!(committed_files(&root).unwrap(), ["c.txt"]);
        assert_eq!(context(&run(&deepwork, Hook::PostCommitReminder, &commit())), ALL_PASSED);
    }

    #[test]
    fn committed_files_are_relative_to_a_project_in_a_subdirectory() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().canonicalize().unwrap();
        write(&repo, "top.md", "x\n");
        write(&repo, "sub/inner.md", "y\n");
        git(&repo, &["init", "-q", "-b", "main"]);
        git(&repo, &["add", "top.md", "sub/inner.md"]);
        git(&repo, &["commit", "-q", "-m", "first"]);
        assert_eq!(committed_files(&repo.join("sub")).unwrap(), ["inner.md"]);
    }
}
