//! `roscoe test <id|file> [--mocks FILE]`: the `test_workflow` tool from a terminal — the workflow run end to end in
//! the real engine and database, mocks answering its AI, human and fan-out steps (and standing in for the scripts
//! and subworkflows they name), the test run deleted afterwards. Exit 0 when the test ran and the run completed.

use clap::Args;
use serde_json::Value;

use super::context::Ctx;
use super::exit::{self, Exit};
use super::input::run_input;
use super::output::Paint;
use super::workflows_cmd::workflow_file;
use cairn_roscoe::runs::TestRequest;

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
        let why = outcome.message.clone().unwrap_or_else(|| format!("the run ended {status}"));
        let code = outcome.code.as_deref().map(|c| format!(" ({c})")).unwrap_or_default();
        let node = outcome.node_id.as_deref().map(|n| format!(" at node '{n}'")).unwrap_or_default();
        eprintln!("{} {}{node}: {why}{code}", out.paint(Paint::Red, "✗"), args.workflow);
        for detail in outcome.details.iter().flatten() {
            eprintln!("  {detail}");
        }
    }
    let usage = outcome.code.as_deref().is_some_and(exit::is_usage);
    Err(Exit::with(if usage { exit::USAGE } else { exit::FAILED }).into())
}
