//! `/`: what needs attention across every workspace — the inbox of runs waiting for a person (prompt and choices
//! inline, answered from the page), runs under way (running, or waiting for an agent), recently failed runs, work
//! items being worked on, and the `--project`'s active DeepWork sessions. Every row links to its page.

use askama::Template;
use axum::extract::{Query, State};
use axum::response::Response;
use cairn_roscoe::runs::{ListRuns, RunSummary};
use cairn_work::{ListQuery, WORK_READ, WorkItem};
use serde_json::Value;

use super::signin::work_caller;
use super::{Layout, PageError, ProjectParam, html, Visit};
use crate::state::{Web, blocking};
use crate::when::Moment;
use crate::workspace::{self, Workspace};

/// Rows read per workspace and list; the inbox asks each waiting run for its step.
const PER_WORKSPACE: i64 = 25;

/// A run as the home page lists it.
struct RunRow {
    id: String,
    project: String,
    workspace: String,
    workflow: String,
    status: String,
    started: Moment,
}

/// A run waiting for a person, with what to decide.
struct Waiting {
    run: RunRow,
    node_id: String,
    prompt: String,
    /// `(transition, label)`.
    choices: Vec<(String, String)>,
}

/// A work item being worked on.
struct ItemRow {
    item: WorkItem,
    since: Moment,
}

/// An active DeepWork workflow of the `--project`.
struct SessionRow {
    session: String,
    title: String,
    step: String,
}

#[derive(Template)]
#[template(path = "home.html")]
struct HomePage {
    layout: Layout,
    inbox: Vec<Waiting>,
    under_way: Vec<RunRow>,
    failed: Vec<RunRow>,
    items: Option<Vec<ItemRow>>,
    sessions: Option<Vec<SessionRow>>,
}

fn row(ws: &Workspace, run: RunSummary) -> RunRow {
    RunRow {
        started: Moment::of(&run.started_at),
        id: run.id,
        project: ws.key.clone(),
        workspace: ws.name.clone(),
        workflow: run.workflow_name,
        status: run.status,
    }
}

/// `GET /`.
pub(crate) async fn page(
    State(web): State<Web>,
    visit: Visit,
    Query(q): Query<ProjectParam>,
) -> Result<Response, PageError> {
    let mut inbox = Vec::new();
    let mut under_way = Vec::new();
    let mut failed = Vec::new();
    for project in workspace::projects(&web).await? {
        let ws = Workspace::resolve(&web, Some(&project.id)).await?;
        let list = |status: &str| ListRuns {
            limit: Some(PER_WORKSPACE),
            status: Some(status.to_owned()),
            ..ListRuns::default()
        };
        for run in web.runs.list_runs(&ws.scope, &list("paused")).await? {
            let status = web.runs.get_run_status(&ws.scope, &run.id).await?;
            match status.pending_step.filter(|p| p.node_type == "human") {
                Some(step) => {
                    let label = |event: &str| step.transitions.iter().find(|t| t.event == event).and_then(|t| t.label.clone());
                    inbox.push(Waiting {
                        choices: step.valid_transitions.iter().map(|t| (t.clone(), label(t).unwrap_or_else(|| t.clone()))).collect(),
                        node_id: step.node_id,
                        prompt: step.prompt,
                        run: row(&ws, run),
                    });
                }
                None => under_way.push(row(&ws, run)),
            }
        }
        under_way.extend(web.runs.list_runs(&ws.scope, &list("running")).await?.into_iter().map(|r| row(&ws, r)));
        failed.extend(web.runs.list_runs(&ws.scope, &list("failed")).await?.into_iter().map(|r| row(&ws, r)));
    }
    let newest_first = |rows: &mut Vec<RunRow>| rows.sort_by(|a, b| b.started.exact.cmp(&a.started.exact));
    newest_first(&mut under_way);
    newest_first(&mut failed);
    failed.truncate(10);
    inbox.sort_by(|a, b| a.run.started.exact.cmp(&b.run.started.exact));
    // Work items, when this visitor may read them.
    let items = match work_caller(&web, &visit, "work_list", &WORK_READ).await {
        Ok(caller) => {
            let mut rows = Vec::new();
            for state in ["in_progress", "claimed", "blocked"] {
                let query = ListQuery { state: state.into(), page_size: 50, ..ListQuery::default() };
                rows.extend(web.work.list_items(&caller, &query).await?.items.into_iter().map(|item| ItemRow {
                    since: Moment::of(if item.claimed_at.is_empty() { &item.updated_at } else { &item.claimed_at }),
                    item,
                }));
            }
            Some(rows)
        }
        Err(_) => None,
    };
    let sessions = match web.deepwork.clone() {
        Some(project) => {
            let found = blocking(move || Ok(project.service.active_sessions(&project.root))).await?;
            let text = |s: &Value, key: &str| s[key].as_str().unwrap_or_default().to_owned();
            Some(
                found
                    .iter()
                    .map(|s| SessionRow {
                        session: text(s, "session_id"),
                        title: format!("{} / {}", text(s, "job_name"), text(s, "workflow_name")),
                        step: text(s, "current_step_id"),
                    })
                    .collect(),
            )
        }
        None => None,
    };
    let layout = Layout::new(&web, &visit, &Workspace::resolve(&web, q.project.as_deref()).await?).await?;
    let page = HomePage { layout: layout.clone(), inbox, under_way, failed, items, sessions };
    Ok(html(&page))
}
