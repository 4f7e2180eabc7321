//! `roscoe workflows list | show | validate | lint | diagram`: the authoring tools that read (`list_workflows`,
//! `get_workflow`, `validate_workflow`, `lint_workflow`, `get_workflow_diagram`) from a terminal. `validate`, `lint`
//! and `diagram` take a stored workflow's id or a YAML file (a path, or a name ending in `.yaml` / `.yml`).

use std::path::Path;

use cairn_roscoe::{Body, Source, Subject};
use clap::Subcommand;

use super::context::Ctx;
use super::exit::{self, Exit};
use super::output::Paint;

/// `roscoe workflows` commands.
#[derive(Debug, Subcommand)]
pub enum WorkflowsCommand {
    /// The workflows in scope, repo before global.
    List {
        /// Only this source: `repo` or `global`.
        #[arg(long, value_parser = ["repo", "global"])]
        source: Option<String>,
    },
    /// A workflow's file as written (`--json`: its config and where it lives).
    Show {
        /// The workflow's id.
        id: String,
        /// Its source, when not repo first.
        #[arg(long, value_parser = ["repo", "global"])]
        source: Option<String>,
    },
    /// Check a workflow against the schema and the integrity rules (exit 1 when it is not valid).
    Validate {
        /// A stored workflow's id, or a YAML file.
        workflow: String,
    },
    /// Validate, then list the lint warnings (exit 1 when it has errors).
    Lint {
        /// A stored workflow's id, or a YAML file.
        workflow: String,
    },
    /// The workflow as a Mermaid flowchart (`--json`: also its nodes and edges).
    Diagram {
        /// A stored workflow's id, or a YAML file.
        workflow: Option<String>,
        /// Draw this run's workflow, each node with its latest status.
        #[arg(long, value_name = "RUN_ID", conflicts_with = "workflow")]
        run: Option<String>,
    },
}

/// Runs a `roscoe workflows` command.
pub(super) async fn run(ctx: &Ctx, command: WorkflowsCommand) -> anyhow::Result<()> {
    let facade = |e: cairn_roscoe::Error| Exit::from_facade(&e);
    let (service, scope, out) = (&ctx.service, &ctx.scope, &ctx.out);
    match command {
        WorkflowsCommand::List { source } => {
            let list = service.list_workflows(scope, source_of(source.as_deref())?).map_err(facade)?;
            if out.json {
                return out.print_json(&list);
            }
            let rows: Vec<Vec<String>> = list
                .iter()
                .map(|w| {
                    let mut note = w.description.clone().unwrap_or_default();
                    if w.shadowed {
                        note = format!("(shadowed by the repo's) {note}");
                    }
                    if let Some(error) = &w.error {
                        note = format!("unreadable: {error}");
                    }
                    vec![w.id.clone(), w.source.to_string(), w.name.clone(), note]
                })
                .collect();
            out.table(&["ID", "SOURCE", "NAME", "DESCRIPTION"], &rows);
            Ok(())
        }
        WorkflowsCommand::Show { id, source } => {
            let detail = service.get_workflow(scope, &id, source_of(source.as_deref())?).map_err(facade)?;
            if out.json {
                return out.print_json(&detail);
            }
            out.note(&out.paint(Paint::Dim, &format!("# {} ({})", detail.path.display(), detail.source)));
            print!("{}", std::fs::read_to_string(&detail.path)?);
            Ok(())
        }
        WorkflowsCommand::Validate { workflow } => {
            let validated = service.validate_workflow(scope, &subject(&workflow)?).map_err(facade)?;
            if out.json {
                out.print_json(&validated)?;
            } else if validated.valid {
                out.note(&format!("{} {workflow} is valid", out.paint(Paint::Green, "✓")));
            } else {
                eprintln!("{} {workflow} is not valid ({}):", out.paint(Paint::Red, "✗"), validated.code.unwrap_or_default());
                for error in &validated.errors {
                    eprintln!("  {error}");
                }
            }
            if validated.valid { Ok(()) } else { Err(Exit::with(exit::FAILED).into()) }
        }
        WorkflowsCommand::Lint { workflow } => {
            let linted = service.lint_workflow(scope, &subject(&workflow)?).map_err(facade)?;
            if out.json {
                out.print_json(&linted)?;
            } else {
                for error in &linted.errors {
                    eprintln!("{} {error}", out.paint(Paint::Red, "error:"));
                }
                for warning in &linted.warnings {
                    let at = warning.state.as_deref().map(|s| format!(" [{s}]")).unwrap_or_default();
                    eprintln!("{} {}{at}: {}", out.paint(Paint::Yellow, "warning:"), warning.code, warning.message);
                }
                if linted.errors.is_empty() && linted.warnings.is_empty() {
                    out.note(&format!("{} {workflow}: no problems", out.paint(Paint::Green, "✓")));
                }
            }
            if linted.errors.is_empty() { Ok(()) } else { Err(Exit::with(exit::FAILED).into()) }
        }
        WorkflowsCommand::Diagram { workflow, run } => {
            let diagram = match (workflow, run) {
                (_, Some(run_id)) => ctx.runs.run_diagram(scope, &run_id).await.map_err(facade)?,
                (Some(workflow), None) => service.workflow_diagram(scope, &subject(&workflow)?).map_err(facade)?,
                (None, None) => return Err(Exit::usage("name a workflow (an id or a YAML file), or --run RUN_ID").into()),
            };
            if out.json {
                return out.print_json(&diagram);
            }
            println!("{}", diagram.mermaid.trim_end());
            Ok(())
        }
    }
}

/// The source a `--source` value names.
pub(super) fn source_of(source: Option<&str>) -> Result<Option<Source>, Exit> {
    source.map(str::parse::<Source>).transpose().map_err(|e| Exit::usage(e.to_string()))
}

/// A stored workflow's id, or the YAML file `workflow` names.
pub(super) fn subject(workflow: &str) -> anyhow::Result<Subject> {
    Ok(match workflow_file(workflow)? {
        Some(text) => Subject::Body(Body::Yaml(text)),
        None => Subject::Stored { id: workflow.to_owned(), source: None },
    })
}

/// The text of the YAML file `workflow` names (a path with a `/`, or a name ending in `.yaml` / `.yml`), `None`
/// for a workflow id.
pub(super) fn workflow_file(workflow: &str) -> anyhow::Result<Option<String>> {
    let is_file = workflow.contains('/') || workflow.ends_with(".yaml") || workflow.ends_with(".yml");
    if !is_file {
        return Ok(None);
    }
    std::fs::read_to_string(Path::new(workflow))
        .map(Some)
        .map_err(|e| Exit::usage(format!("cannot read the workflow file {workflow}: {e}")).into())
}
