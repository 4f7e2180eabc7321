//! `roscoe schedules list | pause | resume | approve`: the workflows' `schedule` and `every` triggers in scope (the
//! project's repo workflows, or with `--global` the global ones) — their next fire times, whether paused, the last
//! run and the slots a catch-up skipped — pausing or resuming all of one workflow's, and approving a repo workflow's
//! current text so the runs its triggers start may run its scripts.

use cairn_roscoe::ScheduleView;
use clap::Subcommand;

use super::context::Ctx;
use super::exit::Exit;
use super::output::Paint;

/// `roscoe schedules` commands.
#[derive(Debug, Subcommand)]
pub enum SchedulesCommand {
    /// The timed triggers in scope: workflow, trigger, next fire times (UTC), paused, last run, skipped slots.
    List,
    /// Stop a workflow's schedules from starting runs until it is resumed.
    Pause {
        /// The workflow's id.
        workflow: String,
    },
    /// Let a paused workflow's schedules start runs again, from now on (the slots missed while paused start none).
    Resume {
        /// The workflow's id.
        workflow: String,
    },
    /// Approve a repo workflow's current file for its triggers' runs, which may then run its `script` nodes (until
    /// the file changes).
    Approve {
        /// The workflow's id.
        workflow: String,
    },
}

/// Runs a `roscoe schedules` command.
pub(super) async fn run(ctx: &Ctx, command: SchedulesCommand) -> anyhow::Result<()> {
    let facade = |e: cairn_roscoe::Error| Exit::from_facade(&e);
    let (runs, scope, out) = (&ctx.runs, &ctx.scope, &ctx.out);
    if let SchedulesCommand::Approve { workflow } = &command {
        let approved = runs.approve_triggers(scope, workflow, &ctx.actor).await.map_err(facade)?;
        if out.json {
            return out.print_json(&approved);
        }
        let short = approved.text_sha256.get(..12).unwrap_or_default();
        let tick = out.paint(Paint::Green, "✓");
        out.note(&format!("{tick} approved {workflow} (text {short}…) for the runs its triggers start"));
        return Ok(());
    }
    let (shown, note) = match command {
        SchedulesCommand::List => (runs.schedules(scope, None).await.map_err(facade)?, None),
        SchedulesCommand::Pause { workflow } => {
            let shown = runs.set_schedules_paused(scope, &workflow, true, &ctx.actor).await.map_err(facade)?;
            (shown, Some(format!("paused the schedules of {workflow}")))
        }
        SchedulesCommand::Resume { workflow } => {
            let shown = runs.set_schedules_paused(scope, &workflow, false, &ctx.actor).await.map_err(facade)?;
            (shown, Some(format!("resumed the schedules of {workflow}")))
        }
        SchedulesCommand::Approve { .. } => unreachable!("answered above"),
    };
    if out.json {
        return out.print_json(&shown);
    }
    if let Some(note) = note {
        out.note(&format!("{} {note}", out.paint(Paint::Green, "✓")));
    }
    if shown.is_empty() {
        out.note(&format!(
            "no workflow here has a `schedule` or `every` trigger{}",
            if scope.root().is_some() { " (global ones: add --global)" } else { "" }
        ));
        return Ok(());
    }
    let rows: Vec<Vec<String>> = shown.iter().map(row).collect();
    out.table(&["WORKFLOW", "TRIGGER", "NEXT (UTC)", "PAUSED", "LAST RUN", "SKIPPED"], &rows);
    Ok(())
}

fn row(s: &ScheduleView) -> Vec<String> {
    let trigger = match &s.timezone {
        Some(zone) => format!("{} \"{}\" {zone}", s.kind, s.expression),
        None => format!("{} {}", s.kind, s.expression),
    };
    vec![
        s.workflow_id.clone(),
        trigger,
        s.next.join(", "),
        if s.paused { "yes" } else { "no" }.to_owned(),
        s.last_run_id.clone().unwrap_or_else(|| "-".into()),
        s.skipped_slots.to_string(),
    ]
}
