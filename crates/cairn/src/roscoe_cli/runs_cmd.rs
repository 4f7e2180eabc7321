//! `roscoe runs list | show | watch | history | logs | resume | cancel | retry | fork`: the run tools of the MCP
//! surface (`list_runs`, `get_run_status`, `get_run_history`, `resume_run`, `cancel_run`, `retry_run`, `fork_run`)
//! from a terminal, on the same database and with the same scope rules; `logs` prints the scripts' recorded stdout
//! and stderr as text. `watch`, `resume`, `retry` and `fork` go on as `roscoe run` does ([`drive`]).

use std::io::{IsTerminal, Write};

use cairn_roscoe::runs::ListRuns;
use clap::Subcommand;
use serde_json::Value;

use super::context::Ctx;
use super::drive::{self, Action, Mode};
use super::exit::{self, Exit};
use super::output::Paint;
use super::progress::{self, seconds};
use super::script_output;

/// `roscoe runs` commands.
#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// The project's runs, newest first (test runs never).
    List {
        /// Only runs with this status: running, paused, completed, failed or cancelled.
        #[arg(long)]
        status: Option<String>,
        /// Only runs of this workflow.
        #[arg(long, value_name = "ID")]
        workflow: Option<String>,
        /// At most this many (1–200).
        #[arg(long, default_value_t = 20)]
        limit: i64,
        /// Include subworkflow runs.
        #[arg(long)]
        children: bool,
    },
    /// A run's status, pending step, output and costs, and its node runs.
    Show {
        /// The run's id.
        run_id: String,
    },
    /// Follow a run's progress until it completes, fails or waits (exit codes as `roscoe run`'s).
    #[command(after_help = exit::RUN_EXIT_CODES)]
    Watch {
        /// The run's id.
        run_id: String,
        /// Show what its scripts print as they print it (as `roscoe run --verbose` does).
        #[arg(long, short = 'v', conflicts_with = "quiet")]
        verbose: bool,
    },
    /// A run's node runs (children nested) and who did what to it.
    History {
        /// The run's id.
        run_id: String,
    },
    /// What a run's scripts printed: each script node run's whole stdout and stderr, subworkflow runs' included.
    Logs {
        /// The run's id.
        run_id: String,
        /// Only the runs of this node.
        node_id: Option<String>,
    },
    /// Answer a run's pending human step and drive it on; without a choice, ask it at the terminal (or say what the
    /// run waits for).
    #[command(after_help = exit::RUN_EXIT_CODES)]
    Resume {
        /// The run's id.
        run_id: String,
        /// The transition chosen (one of the step's choices).
        choice: Option<String>,
        /// A comment kept with the decision.
        #[arg(long)]
        comment: Option<String>,
    },
    /// Cancel a run and its subworkflow runs; their running scripts are stopped.
    Cancel {
        /// The run's id.
        run_id: String,
        /// Why (kept as the run's error).
        #[arg(long)]
        reason: Option<String>,
    },
    /// Start a new run from a node an earlier run started, with the outputs made before it (the original stays);
    /// then go on as `roscoe run` does.
    #[command(after_help = exit::RUN_EXIT_CODES)]
    Fork {
        /// The run's id.
        run_id: String,
        /// The node to start from.
        node_id: String,
    },
    /// Drive a failed or cancelled run again from the node it stopped at.
    #[command(after_help = exit::RUN_EXIT_CODES)]
    Retry {
        /// The run's id.
        run_id: String,
    },
}

/// Runs a `roscoe runs` command.
pub(super) async fn run(ctx: &Ctx, command: RunsCommand) -> anyhow::Result<()> {
    let facade = |e: cairn_roscoe::Error| Exit::from_facade(&e);
    match command {
        RunsCommand::List { status, workflow, limit, children } => {
            let query = ListRuns {
                limit: Some(limit),
                status,
                workflow_id: workflow,
                include_children: children,
                ..ListRuns::default()
            };
            let runs = ctx.runs.list_runs(&ctx.scope, &query).await.map_err(facade)?;
            if ctx.out.json {
                return ctx.out.print_json(&runs);
            }
            let rows: Vec<Vec<String>> = runs
                .iter()
                .map(|r| {
                    vec![r.id.clone(), r.workflow_id.clone(), r.status.clone(), r.started_at.clone(), r.source.clone()]
                })
                .collect();
            ctx.out.table(&["ID", "WORKFLOW", "STATUS", "STARTED", "SOURCE"], &rows);
            Ok(())
        }
        RunsCommand::Show { run_id } => {
            let status = ctx.runs.get_run_status(&ctx.scope, &run_id).await.map_err(facade)?;
            if ctx.out.json {
                return ctx.out.print_json(&status);
            }
            let history = ctx.runs.get_run_history(&ctx.scope, &run_id).await.map_err(facade)?;
            let paint = Paint::of_status(&status.status);
            println!("Run       {}", status.run_id);
            println!("Workflow  {}", history.run["workflowId"].as_str().unwrap_or_default());
            println!("Status    {}", ctx.out.paint_out(paint, &status.status));
            println!("Link      {}", status.url);
            if let Some(note) = &status.url_note {
                println!("          {note}");
            }
            if let Some(step) = &status.pending_step {
                println!("Waits at  {} ({}): {}", step.node_id, step.node_type, step.valid_transitions.join(", "));
            }
            if let Some(error) = &status.error {
                println!("Error     {error}{}", status.error_code.as_deref().map(|c| format!(" ({c})")).unwrap_or_default());
            }
            println!(
                "Cost      {}/{} tokens · ${:.4} ({})",
                status.input_tokens, status.output_tokens, status.total_cost_usd, status.billing_mode
            );
            if let Some(output) = &status.output {
                println!("Output    {}", serde_json::to_string(output)?);
            }
            println!();
            nodes_table(ctx, &history.nodes);
            streams_tails(ctx, &run_id, &history.nodes);
            Ok(())
        }
        RunsCommand::Watch { run_id, verbose } => {
            drive::drive(&ctx.verbose(verbose), &run_id, Action::Look, Mode::Watch).await
        }
        RunsCommand::History { run_id } => {
            let history = ctx.runs.get_run_history(&ctx.scope, &run_id).await.map_err(facade)?;
            if ctx.out.json {
                return ctx.out.print_json(&history);
            }
            nodes_table(ctx, &history.nodes);
            if !ctx.out.quiet && !history.actions.is_empty() {
                println!();
                let rows: Vec<Vec<String>> = history
                    .actions
                    .iter()
                    .map(|a| ["at", "action", "principal", "via"].map(|k| a[k].as_str().unwrap_or_default().to_owned()).to_vec())
                    .collect();
                ctx.out.table(&["AT", "ACTION", "BY", "VIA"], &rows);
            }
            Ok(())
        }
        RunsCommand::Logs { run_id, node_id } => logs(ctx, &run_id, node_id.as_deref()).await,
        RunsCommand::Resume { run_id, choice, comment } => {
            let action = match choice {
                Some(transition) => Action::Resume { transition, comment },
                None => Action::Look,
            };
            drive::drive(ctx, &run_id, action, Mode::Ask).await
        }
        RunsCommand::Cancel { run_id, reason } => {
            let result = ctx.runs.cancel_run(&ctx.scope, &run_id, reason, &ctx.actor).await.map_err(facade)?;
            if ctx.out.json {
                return ctx.out.print_json(&result);
            }
            ctx.out.note(&format!("Run {} is {}.", result.run_id, result.status));
            Ok(())
        }
        RunsCommand::Retry { run_id } => drive::drive(ctx, &run_id, Action::Retry, Mode::Ask).await,
        RunsCommand::Fork { run_id, node_id } => {
            let forked = ctx.runs.fork_run(&ctx.scope, &run_id, &node_id, &ctx.actor).await.map_err(facade)?;
            ctx.out.note(&format!("Run {} forks run {run_id} from node '{node_id}'.", forked.run_id));
            drive::drive(ctx, &forked.run_id, Action::Look, Mode::Ask).await
        }
    }
}

/// The last lines of each script's streams under `runs show`'s table, and where to read the rest (not with `--quiet`).
fn streams_tails(ctx: &Ctx, run_id: &str, nodes: &[Value]) {
    if ctx.out.quiet {
        return;
    }
    let keep = std::io::stdout().is_terminal();
    let mut cut = false;
    for node in nodes {
        let streams = script_output::streams(node);
        if streams.is_empty() {
            continue;
        }
        println!("\n{}", heading(node));
        for (name, text) in streams {
            cut |= script_output::tail(text, script_output::TAIL_LINES).0 > 0;
            for line in script_output::framed(text, name, "  ", keep) {
                println!("{line}");
            }
        }
    }
    if cut {
        println!("\nWhole streams: roscoe runs logs {run_id} [NODE]");
    }
}

/// `roscoe runs logs RUN [NODE]`: every script node run's recorded streams in full, in the order they ran.
async fn logs(ctx: &Ctx, run_id: &str, node_id: Option<&str>) -> anyhow::Result<()> {
    let mut lines = Vec::new();
    ctx.runs.get_run_status(&ctx.scope, run_id).await.map_err(|e| Exit::from_facade(&e))?;
    progress::collect(&ctx.runs, &ctx.scope, run_id.to_owned(), 0, &mut lines).await;
    let chosen: Vec<&progress::Line> =
        lines.iter().filter(|l| node_id.is_none_or(|id| l.node["nodeId"] == id)).collect();
    if let Some(id) = node_id.filter(|_| chosen.is_empty()) {
        let mut ran: Vec<&str> = Vec::new();
        for node in lines.iter().filter_map(|l| l.node["nodeId"].as_str()) {
            if !ran.contains(&node) {
                ran.push(node);
            }
        }
        let message = format!("run {run_id} has no run of node '{id}'; nodes that ran: {}", ran.join(", "));
        return Err(Exit::usage(message).into());
    }
    let keep = std::io::stdout().is_terminal();
    let mut stdout = std::io::stdout().lock();
    let mut printed = false;
    for line in chosen {
        // Only script node runs have streams; one that printed nothing still gets its heading.
        if line.node["output"].get("exitCode").is_none() {
            continue;
        }
        let streams = script_output::streams(&line.node);
        printed = true;
        writeln!(stdout, "== {}{} ==", "  ".repeat(line.depth), heading(&line.node))?;
        if streams.is_empty() {
            writeln!(stdout, "(printed nothing)")?;
        }
        for (name, text) in streams {
            writeln!(stdout, "-- {name}")?;
            writeln!(stdout, "{}", script_output::shown(text.trim_end_matches('\n'), keep))?;
        }
    }
    if !printed {
        let from = node_id.map(|n| format!(" from node '{n}'")).unwrap_or_default();
        ctx.out.note(&format!("Run {run_id} has no script output{from}."));
    }
    Ok(())
}

/// A node run's heading: `check (script, failed, exit 1, visit 2)`.
fn heading(node: &Value) -> String {
    let mut parts = vec![node["nodeType"].as_str().unwrap_or_default().to_owned()];
    parts.push(node["status"].as_str().unwrap_or_default().to_owned());
    if let Some(code) = node["output"]["exitCode"].as_i64() {
        parts.push(format!("exit {code}"));
    }
    if node["output"]["timedOut"] == true {
        parts.push("timed out".to_owned());
    }
    if let Some(visit) = node["iteration"].as_i64().filter(|v| *v > 1) {
        parts.push(format!("visit {visit}"));
    }
    format!("{} ({})", node["nodeId"].as_str().unwrap_or_default(), parts.join(", "))
}

/// Node runs as a table (subworkflow runs' nodes are in their own run's history).
fn nodes_table(ctx: &Ctx, nodes: &[Value]) {
    let rows: Vec<Vec<String>> = nodes
        .iter()
        .map(|n| {
            let text = |k: &str| n[k].as_str().unwrap_or_default().to_owned();
            vec![
                text("nodeId"),
                text("nodeType"),
                text("status"),
                n["durationMs"].as_i64().map_or_else(|| "-".to_owned(), seconds),
                format!("{}/{}", n["inputTokens"].as_i64().unwrap_or(0), n["outputTokens"].as_i64().unwrap_or(0)),
                format!("${:.4}", n["costUsd"].as_f64().unwrap_or(0.0)),
                text("childRunId"),
            ]
        })
        .collect();
    ctx.out.table(&["NODE", "TYPE", "STATUS", "DURATION", "TOKENS", "COST", "CHILD RUN"], &rows);
}
