//! The `script` executor's pure half (§7.1): turning a node into a [`ScriptJob`] (a shell command whose template
//! values are shell-quoted, or a bundled script run directly with templated argv) and a [`ScriptResult`] into the
//! node's output and event. Running the process is the run service's job.

use serde_json::{Value, json};

use super::render;
use super::{Engine, Finish};
use crate::definition::Node;
use crate::definition::shell_holes;
use crate::definition::template::{Part, Template};

/// The default script time limit.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 300_000;

/// What to execute.
#[derive(Clone, Debug, PartialEq)]
pub enum Program {
    /// A command line for `sh -c`.
    Shell(String),
    /// A program and its arguments, no shell.
    Exec {
        /// The program (a path or a name on PATH).
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
}

/// Retry on failure (ASL-style).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Total attempts (≥ 1).
    pub max_attempts: u32,
    /// Wait before the second attempt.
    pub backoff_ms: u64,
    /// Multiplier for each further wait.
    pub backoff_rate: f64,
}

/// A script to run for a node run.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptJob {
    /// The run.
    pub run_id: String,
    /// The node run.
    pub node_run_id: String,
    /// The node.
    pub node_id: String,
    /// What to execute.
    pub program: Program,
    /// Extra environment (`config.env`, rendered raw).
    pub env: Vec<(String, String)>,
    /// Working directory (`config.cwd`, rendered); `None` = the default.
    pub cwd: Option<String>,
    /// Time limit per attempt.
    pub timeout_ms: u64,
    /// Exit codes that mean success.
    pub success_codes: Vec<i32>,
    /// Retry policy.
    pub retry: RetryPolicy,
    /// `{ input, nodes }` for `ROSCOE_CONTEXT_FILE`.
    pub context: Value,
    /// `ROSCOE_PROJECT_ROOT` (empty in the global namespace).
    pub project_root: Option<String>,
    /// `ROSCOE_WORKFLOW_DIR`.
    pub workflow_dir: String,
}

impl ScriptJob {
    /// The node run's recorded input.
    pub fn describe(&self) -> Value {
        match &self.program {
            Program::Shell(command) => json!({ "command": command }),
            Program::Exec { program, args } => json!({ "program": program, "args": args }),
        }
    }
}

/// How a script ended.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScriptResult {
    /// The exit code (none when killed or not started).
    pub exit_code: Option<i32>,
    /// Captured stdout (capped).
    pub stdout: String,
    /// Captured stderr (capped).
    pub stderr: String,
    /// Killed at its time limit.
    pub timed_out: bool,
    /// It could not be started.
    pub spawn_error: Option<String>,
    /// Output was cut at the cap.
    pub truncated: bool,
    /// Attempts made.
    pub attempts: u32,
    /// The exit code is a success code.
    pub success: bool,
}

/// The POSIX shell word for `text`: single-quoted, inner quotes escaped.
pub(crate) fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The job for `node`, or the failure of a template that cannot render.
pub(super) fn job(engine: &mut Engine<'_>, node: &Node) -> Result<ScriptJob, Finish> {
    let config = &node.config;
    let program = if let Some(command) = node.config_str("command") {
        Program::Shell(quoted_command(engine, command)?)
    } else {
        let script = node.config_str("script").unwrap_or_default();
        if script.starts_with('/') || script.split('/').any(|part| part == "..") {
            return Err(Finish::failed(
                Value::Null,
                format!("script '{script}' must be a path inside $ROSCOE_WORKFLOW_DIR"),
                None,
            ));
        }
        let path = format!("{}/{script}", engine.run.workflow_dir.trim_end_matches('/'));
        let mut args = Vec::new();
        for arg in config.get("args").and_then(Value::as_array).into_iter().flatten() {
            let text = match arg {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            args.push(render::text(engine, &text, &[])?);
        }
        match node.config_str("interpreter") {
            Some(interpreter) => {
                args.insert(0, path);
                Program::Exec { program: interpreter.to_owned(), args }
            }
            None => Program::Exec { program: path, args },
        }
    };
    let mut env = Vec::new();
    if let Some(Value::Object(vars)) = config.get("env") {
        for (name, value) in vars {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            env.push((name.clone(), render::text(engine, &text, &[])?));
        }
    }
    let cwd = match node.config_str("cwd") {
        Some(cwd) => Some(render::text(engine, cwd, &[])?),
        None => None,
    };
    let retry = config.get("retry");
    let number = |key: &str| retry.and_then(|r| r.get(key)).and_then(Value::as_f64);
    let run = &engine.run;
    Ok(ScriptJob {
        run_id: run.id.clone(),
        node_run_id: run.open.as_ref().expect("open").id.clone(),
        node_id: node.id.clone(),
        program,
        env,
        cwd,
        timeout_ms: config
            .get("timeoutMs")
            .and_then(Value::as_u64)
            .or(node.timeout_ms)
            .unwrap_or(DEFAULT_TIMEOUT_MS),
        success_codes: config
            .get("successExitCodes")
            .and_then(Value::as_array)
            .map(|codes| codes.iter().filter_map(Value::as_i64).map(|c| c as i32).collect())
            .unwrap_or_else(|| vec![0]),
        retry: RetryPolicy {
            max_attempts: number("maxAttempts").map(|n| n.max(1.0) as u32).unwrap_or(1),
            backoff_ms: number("backoffMs").map(|n| n.max(0.0) as u64).unwrap_or(1000),
            backoff_rate: number("backoffRate").unwrap_or(2.0),
        },
        context: json!({ "input": run.input, "nodes": run.context.nodes }),
        project_root: run.project_root.clone(),
        workflow_dir: run.workflow_dir.clone(),
    })
}

/// Renders a shell command: literal text as written, each `{{ … }}` as one single-quoted word.
fn quoted_command(engine: &mut Engine<'_>, command: &str) -> Result<String, Finish> {
    // Validation refuses such a command; a workflow stored before that rule is refused here, before it runs.
    if let Some(problem) = shell_holes::unsafe_hole(command) {
        return Err(Finish::failed(Value::Null, problem, Some("script_hole_quoted")));
    }
    let template = Template::parse(command).map_err(|e| {
        Finish::failed(Value::Null, format!("command template does not parse: {e}"), Some("template_unresolved"))
    })?;
    let mut out = String::new();
    for part in template.parts {
        match part {
            Part::Text(text) => out.push_str(&text),
            Part::Hole(expr) => {
                let hole = Template { parts: vec![Part::Hole(expr)] }.to_string();
                out.push_str(&shell_quote(&render::text(engine, &hole, &[])?));
            }
        }
    }
    Ok(out)
}

/// The node's output and event for a finished script.
pub(super) fn finish(result: ScriptResult) -> Finish {
    let mut output = json!({
        "stdout": result.stdout,
        "stderr": result.stderr,
        "exitCode": result.exit_code,
        "timedOut": result.timed_out,
        "text": result.stdout,
    });
    if let Ok(parsed) = serde_json::from_str::<Value>(result.stdout.trim()) {
        output["json"] = parsed;
    }
    if result.truncated {
        output["truncated"] = json!(true);
    }
    if result.success {
        return Finish::ok(output, "success");
    }
    let error = if let Some(e) = result.spawn_error {
        format!("the script could not be started: {e}")
    } else if result.timed_out {
        "the script ran past its time limit and was killed".to_owned()
    } else {
        match result.exit_code {
            Some(code) => format!("the script exited with code {code}"),
            None => "the script was killed by a signal".to_owned(),
        }
    };
    Finish::failed(output, error, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_makes_one_word() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's; rm -rf /"), "'it'\\''s; rm -rf /'");
    }
}
