//! `roscoe run <workflow>`: creates a run (source `cli`, started by the local user) and drives it ([`drive`]): the
//! run's web link first, then its progress, until it completes, fails or waits for a person. `--detach` hands the
//! run to a copy of this program in a session of its own (the worker: it creates the run, answers its id on a pipe,
//! and drives it with nobody at the terminal), and returns with the id at once.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use cairn_roscoe::{Budget, Scope, Source, StartOptions, StartRequest};
use clap::Args;
use serde_json::Value;

use super::context::Ctx;
use super::drive::{self, Action, Mode};
use super::exit::{self, Exit};
use super::input::run_input;
use super::output::Paint;

/// `roscoe run` options.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The workflow's id.
    pub workflow: String,
    /// Where the workflow lives, when not repo first: `repo` or `global`.
    #[arg(long, value_parser = ["repo", "global"])]
    pub source: Option<String>,
    /// The run's input as a JSON object.
    #[arg(long, value_name = "JSON")]
    pub input: Option<String>,
    /// One input value, `key=value` (repeatable; the value is read as JSON when it is JSON, else as text).
    #[arg(short = 'i', value_name = "KEY=VALUE")]
    pub values: Vec<String>,
    /// The most the run may spend on model calls, in USD: before a call that could pass it the run pauses
    /// (exit 3) until the budget is raised (`set_run_budget`, the run page). Default: the workflow's `budget`, else
    /// roscoe.yaml's.
    #[arg(long, value_name = "USD", value_parser = budget_usd)]
    pub budget_usd: Option<f64>,
    /// Return at once with the run id; the run is driven in the background until it ends or waits.
    #[arg(long)]
    pub detach: bool,
    /// Show what the workflow's scripts print as they print it, on stderr among the progress lines: each line after
    /// its node's id, `[build] …`, and `[build:stderr] …` for standard error.
    #[arg(long, short = 'v', conflicts_with_all = ["detach", "quiet"])]
    pub verbose: bool,
    /// (Internal) the background worker of `--detach`.
    #[arg(long, hide = true)]
    pub worker: bool,
}

/// Runs `roscoe run`.
pub(super) async fn run(ctx: &Ctx, args: RunArgs) -> anyhow::Result<()> {
    let input = run_input(args.input.as_deref(), &args.values)?;
    let source = args.source.as_deref().map(str::parse::<Source>).transpose().map_err(|e| Exit::usage(e.to_string()))?;
    if args.detach {
        return detach(ctx, &args, input);
    }
    drive::take_ctrl_c();
    let options = StartOptions { budget: args.budget_usd.map(|usd| Budget { usd: Some(usd), tokens: None }), ..StartOptions::default() };
    let (scope, actor) = (&ctx.scope, &ctx.actor);
    let start = StartRequest { scope, id: &args.workflow, source, input: input.as_ref(), actor };
    let created = ctx.runs.create_run(start, &options).await;
    if args.worker {
        return work(ctx, created).await;
    }
    let run_id = created.map_err(|e| Exit::from_facade(&e))?;
    let ctx = &ctx.verbose(args.verbose);
    let url = ctx.runs.get_run_status(&ctx.scope, &run_id).await.map(|r| r.url).unwrap_or_default();
    ctx.out.note(&format!(
        "{} {} · run {run_id} · {}",
        ctx.out.paint(Paint::Cyan, "▶"),
        ctx.out.paint(Paint::Bold, &args.workflow),
        ctx.out.paint(Paint::Dim, &url)
    ));
    drive::drive(ctx, &run_id, Action::Start, Mode::Ask).await
}

/// The `--detach` worker: answers the new run's AdvanceResult (or the error body) as one JSON line on stdout, closes
/// it, and drives the run while nobody is at the terminal.
async fn work(ctx: &Ctx, created: Result<String, cairn_roscoe::Error>) -> anyhow::Result<()> {
    let started = match created {
        Ok(run_id) => ctx.runs.get_run_status(&ctx.scope, &run_id).await.map(|result| (run_id, result)),
        Err(error) => Err(error),
    };
    let (line, run_id) = match &started {
        Ok((run_id, result)) => (serde_json::to_string(result)?, Some(run_id.clone())),
        Err(error) => (error.body().to_string(), None),
    };
    println!("{line}");
    silence_stdout();
    match run_id {
        Some(run_id) => drive::drive(ctx, &run_id, Action::Start, Mode::Watch).await,
        None => Err(Exit::with(exit::FAILED).into()),
    }
}

/// Starts the worker in a session of its own and prints the run id it answers.
fn detach(ctx: &Ctx, args: &RunArgs, input: Option<Value>) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let mut command = std::process::Command::new(exe);
    command.args(["roscoe", "run", &args.workflow, "--worker", "--quiet"]);
    match &ctx.scope {
        Scope::Global => command.arg("--global"),
        Scope::Project { cwd, .. } => command.arg("--cwd").arg(cwd),
    };
    if let Some(source) = &args.source {
        command.args(["--source", source]);
    }
    if let Some(usd) = args.budget_usd {
        command.args(["--budget-usd", &usd.to_string()]);
    }
    if let Some(input) = input {
        command.args(["--input", &input.to_string()]);
    }
    if let Some(url) = &ctx.options.database_url {
        command.args(["--database-url", url]);
    }
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // The `cairn` command tree whatever this program was started as; Ctrl-C and hang-ups at this terminal do
        // not reach the worker's new session.
        command.arg0("cairn");
        // SAFETY: between fork and exec the closure calls only setsid, which is async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
    }
    let mut child = command.spawn()?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped stdout")).read_line(&mut line)?;
    let answer: Value = serde_json::from_str(line.trim())
        .map_err(|_| anyhow::anyhow!("the background worker did not start the run (it answered {line:?})"))?;
    if let Some(error) = answer.get("error").and_then(Value::as_str) {
        if ctx.out.json {
            ctx.out.print_json(&answer)?;
        }
        let code = answer["code"].as_str().unwrap_or("internal");
        let status = if exit::is_usage(code) { exit::USAGE } else { exit::FAILED };
        return Err(Exit { code: status, message: Some(format!("{error} ({code})")) }.into());
    }
    let run_id = answer["runId"].as_str().unwrap_or_default();
    if ctx.out.json {
        ctx.out.print_json(&answer)?;
    } else {
        println!("{run_id}");
    }
    ctx.out.note(&format!(
        "Run {run_id} runs in the background. Follow it with `roscoe runs watch{} {run_id}` or at {}",
        ctx.scope_flags(),
        answer["url"].as_str().unwrap_or_default()
    ));
    // The worker goes on alone; its exit status is the run's, which `runs watch` reports.
    drop(child);
    Ok(())
}

/// Points stdout at /dev/null: nothing more goes to the pipe the caller has stopped reading.
fn silence_stdout() {
    #[cfg(unix)]
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        use std::os::fd::AsRawFd;
        // SAFETY: dup2 onto stdout's descriptor number; `null` stays open until after the call.
        unsafe {
            libc::dup2(null.as_raw_fd(), 1);
        }
    }
}

/// A `--budget-usd` value: a number of dollars, not negative.
fn budget_usd(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd >= 0.0 => Ok(usd),
        _ => Err(format!("'{text}' is not an amount of USD; give a number such as 0.50")),
    }
}
