//! `roscoe test <id|file> [--mocks FILE]`: the `test_workflow` tool from a terminal — the workflow run end to end in
//! the real engine and database, mocks answering its AI, human and fan-out steps (and standing in for the scripts
//! and subworkflows they name), the test run deleted afterwards. Exit 0 when the test ran and the run completed; else it
//! says why (the node, event and error, a failed script's stderr).

use clap::Args;
use serde_json::Value;

use super::context::Ctx;
use super::exit::{self, Exit};
use super::input::run_input;
use super::output::{Output, Paint};
use super::script_output;
use super::workflows_cmd::workflow_file;
use cairn_roscoe::runs::{RunFailure, TestRequest};

/// `roscoe test` options.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// A stored workflow's id, or a YAML file.
    pub workflow: String,
    /// A JSON file of answers by node id (as `test_workflow`'s `mocks`).
    #[arg(long, value_name = "FILE")]
    pub mocks: Option<std::path::PathBuf>,
    /// The run's input as a JSON object.
    #[arg(long, value_name = "JSON")]
    pub input: Option<String>,
    /// One input value, `key=value` (repeatable).
    #[arg(short = 'i', value_name = "KEY=VALUE")]
    pub values: Vec<String>,
    /// Give up after this many milliseconds (default 60000, at most 600000).
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
}

/// Runs `roscoe test`.
pub(super) async fn run(ctx: &Ctx, args: TestArgs) -> anyhow::Result<()> {
    let mocks = match &args.mocks {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Exit::usage(format!("cannot read the mocks file {}: {e}", path.display())))?;
            Some(serde_json::from_str::<Value>(&text).map_err(|e| {
                Exit::usage(format!("the mocks file {} is not JSON ({e}); write an object of answers by node id", path.display()))
            })?)
        }
    };
    let yaml = workflow_file(&args.workflow)?;
    let request = TestRequest {
        id: yaml.is_none().then(|| args.workflow.clone()),
        source: None,
        config: None,
        yaml,
        input: run_input(args.input.as_deref(), &args.values)?,
        mocks,
        timeout_ms: args.timeout_ms,
    };
    let outcome = ctx.runs.test_workflow(&ctx.scope, request, &ctx.actor).await.map_err(|e| Exit::from_facade(&e))?;
    let out = &ctx.out;
    if out.json {
        out.print_json(&outcome)?;
    }
    let status = outcome.final_status.clone().unwrap_or_default();
    if outcome.ok && status == "completed" {
        let took = outcome.duration_ms.map(|ms| format!(" in {ms} ms")).unwrap_or_default();
        out.note(&format!("{} {} completed on mocks{took}", out.paint(Paint::Green, "✓"), args.workflow));
        return Ok(());
    }
    if !out.json {
        match &outcome.failure {
            Some(failure) => print_failure(out, &args.workflow, &status, failure, outcome.node_trace.as_deref()),
            None => {
                let why = outcome.message.clone().unwrap_or_else(|| format!("the run ended {status}"));
                let code = outcome.code.as_deref().map(|c| format!(" ({c})")).unwrap_or_default();
                let node = outcome.node_id.as_deref().map(|n| format!(" at node '{n}'")).unwrap_or_default();
                eprintln!("{} {}{node}: {why}{code}", out.paint(Paint::Red, "✗"), args.workflow);
            }
        }
        for detail in outcome.details.iter().flatten() {
            eprintln!("  {detail}");
        }
    }
    let usage = outcome.code.as_deref().is_some_and(exit::is_usage);
    Err(Exit::with(if usage { exit::USAGE } else { exit::FAILED }).into())
}

/// Why a test run ended failed: the node it stopped at and the event, the run's error and code, the node's own
/// error, and a failed script's last lines of stderr.
fn print_failure(out: &Output, workflow: &str, status: &str, failure: &RunFailure, trace: Option<&[Value]>) {
    let node = failure.node_id.as_deref().map(|n| format!(" at node '{n}'")).unwrap_or_default();
    let mut about: Vec<&str> = failure.node_type.iter().map(String::as_str).collect();
    let event = failure.event.as_deref().map(|e| format!("event {e}"));
    about.extend(event.as_deref());
    let about = if about.is_empty() { String::new() } else { format!(" ({})", about.join(", ")) };
    let error = failure.error.as_deref().unwrap_or("no error was recorded");
    let code = failure.code.as_deref().map(|c| format!(" ({c})")).unwrap_or_default();
    eprintln!("{} {workflow}: the run ended {status}{node}{about}: {error}{code}", out.paint(Paint::Red, "✗"));
    if let (Some(id), Some(node_error)) = (&failure.node_id, &failure.node_error)
        && !error.contains(node_error.as_str())
    {
        eprintln!("  {id}: {node_error}");
    }
    let id = failure.node_id.as_deref().unwrap_or_default();
    let failed = trace.into_iter().flatten().rev().find(|n| n["status"] == "failed" && n["nodeId"] == id);
    for line in failed.map(|n| script_output::failed_tail(n, "  ", out.err_tty)).unwrap_or_default() {
        eprintln!("{line}");
    }
}
