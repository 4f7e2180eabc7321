//! The loop every command that moves a run shares (`run`, `runs resume`, `runs retry`, `runs watch`): do one facade
//! call (start the run, answer its human step, retry it, or look at it), show its progress, and go on until the run
//! completes, fails or waits — a human step is asked at the terminal when standard input is one; the AI steps are
//! run by this command through the providers of `roscoe.yaml`; a run paused on its budget, an AI step no provider
//! serves (handed back to a host agent) or an unanswered human step ends the command with exit 3 and what to do next. Ctrl-C while the run executes cancels it and waits for the cancel to land (a second
//! Ctrl-C leaves at once); Ctrl-C at a question leaves the run paused; Ctrl-C while only watching leaves it alone.

use std::io::IsTerminal;

use cairn_roscoe::runs::AdvanceResult;
use cairn_roscoe::{Error, Runs};

use super::context::Ctx;
use super::exit::{self, Exit};
use super::output::Paint;
use super::progress::Progress;
use super::prompt::{self, Asked};

/// The facade call that moves the run next.
#[derive(Debug, Clone)]
pub(super) enum Action {
    /// Drive a run just created from its start.
    Start,
    /// Answer the pending human step with `transition`.
    Resume { transition: String, comment: Option<String> },
    /// Retry a failed or cancelled run from where it stopped.
    Retry,
    /// Look at the run as it is.
    Look,
}

/// Whether the command answers human steps at the terminal (when stdin is one) or only watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Ask human steps at the terminal.
    Ask,
    /// Watch until the run stops or waits; never answer.
    Watch,
}

/// Makes Ctrl-C this process's to handle from now on (tokio keeps its handler for the life of the process), so one
/// that comes while a run is being created does not end the process with the run half-started.
pub(super) fn take_ctrl_c() {
    #[cfg(unix)]
    {
        let _ = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt());
    }
}

/// Moves run `run_id` with `first`, then on until it stops or waits; prints the result and ends with its exit code.
pub(super) async fn drive(ctx: &Ctx, run_id: &str, first: Action, mode: Mode) -> anyhow::Result<()> {
    take_ctrl_c();
    let only_new = matches!(first, Action::Resume { .. } | Action::Retry);
    let mut progress = Progress::start(ctx, run_id, only_new).await;
    let mut action = first;
    let result = loop {
        let acted = act(ctx, run_id, action).await;
        progress.hold().await;
        let (result, interrupted) = acted.map_err(|error| Exit::from_facade(&error))?;
        if interrupted {
            break result;
        }
        match (result.status.as_str(), &result.pending_step) {
            ("running", _) => {
                // Another process drives it: shown while it goes on (the spinner, `--verbose`'s script lines).
                progress.resume();
                wait_for_change(ctx, run_id, "running").await?;
                action = Action::Look;
            }
            ("paused", None) if result.resumes_at.is_some() => {
                wait_for_delay(ctx, run_id, result.resumes_at.as_deref().unwrap_or_default()).await?;
                action = Action::Look;
            }
            ("paused", Some(step))
                if mode == Mode::Ask && step.node_type == "human" && std::io::stdin().is_terminal() =>
            {
                match prompt::ask(step, &ctx.out).await {
                    Asked::Chose(transition, comment) => action = Action::Resume { transition, comment },
                    Asked::Left => break result,
                }
            }
            _ => break result,
        }
        progress.resume();
    };
    report(ctx, &result)
}

/// Does `action`; with Ctrl-C while it executes, cancels the run and waits for the cancel to land. The result, and
/// whether Ctrl-C came.
async fn act(ctx: &Ctx, run_id: &str, action: Action) -> Result<(AdvanceResult, bool), Error> {
    let (runs, scope, actor, id) = (ctx.runs.clone(), ctx.scope.clone(), ctx.actor.clone(), run_id.to_owned());
    if matches!(action, Action::Look) {
        return runs.get_run_status(&scope, &id).await.map(|r| (r, false));
    }
    let mut task = tokio::spawn(async move {
        match action {
            Action::Start => runs.drive_created(&scope, &id).await,
            Action::Resume { transition, comment } => runs.resume(&scope, &id, None, transition, comment, &actor).await,
            Action::Retry => runs.retry_run(&scope, &id, &actor).await,
            Action::Look => runs.get_run_status(&scope, &id).await,
        }
    });
    tokio::select! {
        joined = &mut task => return joined.map_err(|e| Error::Internal(e.to_string()))?.map(|r| (r, false)),
        _ = tokio::signal::ctrl_c() => {}
    }
    eprintln!("\n{}", ctx.out.paint(Paint::Yellow, &format!("Ctrl-C: cancelling run {run_id} (Ctrl-C again to leave at once)…")));
    let reason = Some("cancelled with Ctrl-C at the terminal".to_owned());
    if let Err(error) = ctx.runs.cancel_run(&ctx.scope, run_id, reason, &ctx.actor).await {
        // A run that ended just now is left as it ended.
        tracing::debug!("cancel after Ctrl-C: {error}");
    }
    tokio::select! {
        // Whatever the interrupted call answers, the run's state is what counts now.
        _ = &mut task => {}
        _ = tokio::signal::ctrl_c() => std::process::exit(i32::from(exit::INTERRUPTED)),
    }
    ctx.runs.get_run_status(&ctx.scope, run_id).await.map(|r| (r, true))
}

/// Waits out a node's `delayMs` in run `run_id`: until `until` (RFC 3339), when the next look at the run fires its
/// timer here, or until the tree changes first (a server fired it); Ctrl-C stops watching.
async fn wait_for_delay(ctx: &Ctx, run_id: &str, until: &str) -> anyhow::Result<()> {
    let due = chrono::DateTime::parse_from_rfc3339(until).map(|t| t.timestamp_millis()).unwrap_or_default();
    let left = u64::try_from(due - chrono::Utc::now().timestamp_millis()).unwrap_or(0);
    ctx.out.note(&format!("⏳ Run {run_id} waits until {until} before its next step (delayMs)"));
    tokio::select! {
        changed = wait_for_change(ctx, run_id, "paused") => changed,
        () = tokio::time::sleep(std::time::Duration::from_millis(left + 5)) => Ok(()),
    }
}

/// Waits until run `run_id`'s tree changes (another process or a background task drives it), the run last seen
/// `status`; Ctrl-C stops watching.
async fn wait_for_change(ctx: &Ctx, run_id: &str, status: &str) -> anyhow::Result<()> {
    let runs: &Runs = &ctx.runs;
    let seen = runs.tree_event_count(run_id).await.map_err(|e| Exit::from_facade(&e))?;
    // A change made between the answer that said `status` and this count is not waited for.
    let now = runs.get_run_status(&ctx.scope, run_id).await.map_err(|e| Exit::from_facade(&e))?;
    if now.status != status {
        return Ok(());
    }
    let mut watcher = runs.watch_tree(run_id.to_owned(), seen);
    tokio::select! {
        changed = watcher.changed() => changed.map_err(|e| Exit::from_facade(&e).into()),
        _ = tokio::signal::ctrl_c() => {
            eprintln!("\nStopped watching; run {run_id} goes on.");
            Err(Exit::with(exit::INTERRUPTED).into())
        }
    }
}

/// Prints the run's result (`--json`: the AdvanceResult on stdout; else a summary, and a completed run's output on
/// stdout) and ends with its exit code.
pub(super) fn report(ctx: &Ctx, result: &AdvanceResult) -> anyhow::Result<()> {
    let out = &ctx.out;
    if out.json {
        out.print_json(result)?;
    }
    let costs = format!(
        "{}/{} tokens · ${:.4} ({})",
        result.input_tokens, result.output_tokens, result.total_cost_usd, result.billing_mode
    );
    match result.status.as_str() {
        "completed" => {
            out.note(&format!("{} Run {} completed · {costs}", out.paint(Paint::Green, "✓"), result.run_id));
            if !out.json && let Some(output) = result.output.as_ref().filter(|o| !o.is_null()) {
                println!("{}", serde_json::to_string_pretty(output)?);
            }
            Ok(())
        }
        "paused" => {
            eprintln!("{}", waiting(ctx, result));
            if let Some(note) = &result.url_note {
                eprintln!("  {note}");
            }
            Err(Exit::with(exit::WAITING).into())
        }
        status => {
            let why = match (&result.error, &result.error_code) {
                (Some(error), Some(code)) => format!(": {error} ({code})"),
                (Some(error), None) => format!(": {error}"),
                _ => String::new(),
            };
            eprintln!("{} Run {} {status}{why} · {costs}", out.paint(Paint::Red, "✗"), result.run_id);
            Err(Exit::with(exit::FAILED).into())
        }
    }
}

/// What a paused run waits for, and how to go on.
fn waiting(ctx: &Ctx, result: &AdvanceResult) -> String {
    let (id, url, flags) = (&result.run_id, &result.url, ctx.scope_flags());
    let mark = ctx.out.paint(Paint::Yellow, "⏸");
    let Some(step) = &result.pending_step else {
        if let Some(at) = &result.resumes_at {
            return format!("{mark} Run {id} waits until {at} before its next step (delayMs); it goes on by itself \
                            while a `cairn serve` or `roscoe mcp` of this database runs. Follow it at {url}");
        }
        return format!("{mark} Run {id} is paused. Follow it at {url}");
    };
    let node = &step.node_id;
    if step.node_type == "human" {
        let question = step.prompt.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
        return format!(
            "{mark} Run {id} waits for a person at step '{node}' (human): {question}\n  Choices: {}\n  Answer with \
             `roscoe runs resume{flags} {id} <choice>`, or in the web UI: {url}",
            step.valid_transitions.join(", ")
        );
    }
    if let Some(hold) = &step.budget_exceeded {
        return format!(
            "{mark} Run {id} is paused on its budget before step '{node}' ({}): {}\n  Raise the budget on the run's \
             page ({url}) or with the set_run_budget tool; the run goes on from there.",
            step.node_type, hold.message
        );
    }
    let why = step.handed_back.as_deref().map(|reason| format!(" ({reason})")).unwrap_or_default();
    format!(
        "{mark} Run {id} waits at step '{node}' ({}): an AI step that no provider of this cairn serves{why}, so a host \
         agent answers it over MCP (advance_run, runId {}).\n  Configure a provider (docs: roscoe-yaml) or follow it in \
         the web UI: {url}\n  Once the step is answered, continue here with `roscoe runs resume{flags} {id}`.",
        step.node_type, step.run_id
    )
}
