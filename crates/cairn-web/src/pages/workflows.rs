//! Workflow pages: the list (source badge, shadowed marker, validation state; searched by id, name or description,
//! a page of 25 by id) and one workflow (its graph as SVG,
//! `crate::graph`, with a table of its nodes the graph links to, validation and lint, YAML, a form that starts a
//! run, and its schedules with a Pause / Resume form).

use askama::Template;
use axum::extract::{Form, Path, Query, State};
use axum::response::{Redirect, Response};
use cairn_roscoe::{ScheduleView, Scope, Source, Subject};
use serde::Deserialize;
use serde_json::Value;

use super::paging::PAGE_SIZE;
use super::{Layout, PageError, check_csrf, html, Visit};
use crate::error::ApiError;
use crate::graph::Graph;
use crate::state::{Web, blocking};
use crate::workspace::Workspace;

/// `?project=&source=`.
#[derive(Debug, Deserialize)]
pub(crate) struct SourceParam {
    project: Option<String>,
    source: Option<Source>,
}

/// `?project=&source=&q=&after=`: the list's search (id, name or description, any case) and the place its page
/// starts after.
#[derive(Debug, Deserialize)]
pub(crate) struct ListParam {
    project: Option<String>,
    source: Option<Source>,
    #[serde(default)]
    q: String,
    #[serde(default)]
    after: String,
}

struct Row {
    id: String,
    name: String,
    description: String,
    source: String,
    shadowed: bool,
    valid: bool,
    problem: String,
}

#[derive(Template)]
#[template(path = "workflows/list.html")]
struct ListPage {
    layout: Layout,
    rows: Vec<Row>,
    /// The search.
    search: String,
    /// The place the next page starts after ("" on the last page).
    next: String,
    /// Whether this page is not the first.
    later: bool,
}

#[derive(Template)]
#[template(path = "workflows/page.html")]
struct WorkflowPage {
    layout: Layout,
    id: String,
    name: String,
    description: String,
    source: String,
    errors: Vec<String>,
    warnings: Vec<(String, String)>,
    graph: Graph,
    yaml: String,
    /// Its `schedule` / `every` triggers.
    schedules: Vec<ScheduleRow>,
    /// Whether they are paused (the form offers Resume).
    paused: bool,
}

/// One timed trigger on the workflow page.
struct ScheduleRow {
    trigger: String,
    next: String,
    paused: bool,
    last_run: String,
    skipped: i64,
}

impl From<ScheduleView> for ScheduleRow {
    fn from(s: ScheduleView) -> Self {
        let zone = s.timezone.map(|z| format!(" ({z})")).unwrap_or_default();
        ScheduleRow {
            trigger: format!("{} {}{zone}", s.kind, s.expression),
            next: s.next.join(", "),
            paused: s.paused,
            last_run: s.last_run_id.unwrap_or_default(),
            skipped: s.skipped_slots,
        }
    }
}

/// The scope a workflow's schedules live in: global for a global workflow, else the workspace's project.
fn schedule_scope(ws: &Workspace, source: Source) -> Scope {
    if source == Source::Global { Scope::Global } else { ws.scope.clone() }
}

/// `GET /workflows`.
pub(crate) async fn list(
    State(web): State<Web>,
    visit: Visit,
    Query(q): Query<ListParam>,
) -> Result<Response, PageError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let layout = Layout::new(&web, &visit, &ws).await?;
    let roscoe = web.roscoe.clone();
    let (search, after) = (q.q.trim().to_lowercase(), q.after.clone());
    let (rows, next) = blocking(move || {
        let mut found = roscoe.list_workflows(&ws.scope, q.source)?;
        found.retain(|w| {
            let text = format!("{}\n{}\n{}", w.id, w.name, w.description.as_deref().unwrap_or_default());
            (search.is_empty() || text.to_lowercase().contains(&search)) && place(w) > after
        });
        found.sort_by_key(place);
        // Only the page's workflows are validated.
        let next = if found.len() > PAGE_SIZE { place(&found[PAGE_SIZE - 1]) } else { String::new() };
        found.truncate(PAGE_SIZE);
        let rows = found
            .into_iter()
            .map(|w| {
                let subject = Subject::Stored { id: w.id.clone(), source: Some(w.source) };
                let (valid, problem) = match (&w.error, roscoe.validate_workflow(&ws.scope, &subject)) {
                    (Some(error), _) => (false, error.clone()),
                    (None, Ok(v)) => (v.valid, v.errors.first().cloned().unwrap_or_default()),
                    (None, Err(e)) => (false, e.to_string()),
                };
                Row {
                    id: w.id,
                    name: w.name,
                    description: w.description.unwrap_or_default(),
                    source: w.source.to_string(),
                    shadowed: w.shadowed,
                    valid,
                    problem,
                }
            })
            .collect::<Vec<_>>();
        Ok((rows, next))
    })
    .await?;
    let later = !q.after.is_empty();
    Ok(html(&ListPage { layout: layout.clone(), rows, search: q.q, next, later }))
}

/// Where a workflow sorts in the list, and the cursor of the page after it: `id:source` (a repo and a global
/// workflow may share an id).
fn place(workflow: &cairn_roscoe::WorkflowSummary) -> String {
    format!("{}:{}", workflow.id, workflow.source)
}

/// `GET /workflows/{id}`.
pub(crate) async fn page(
    State(web): State<Web>,
    visit: Visit,
    Path(id): Path<String>,
    Query(q): Query<SourceParam>,
) -> Result<Response, PageError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let layout = Layout::new(&web, &visit, &ws).await?;
    let roscoe = web.roscoe.clone();
    let runs = web.runs.clone();
    let page = blocking(move || {
        let detail = roscoe.get_workflow(&ws.scope, &id, q.source)?;
        let scheduled = schedule_scope(&ws, detail.source);
        let subject = Subject::Stored { id: id.clone(), source: Some(detail.source) };
        let linted = roscoe.lint_workflow(&ws.scope, &subject)?;
        let graph = roscoe.workflow_diagram(&ws.scope, &subject).map(Graph::from).unwrap_or_default();
        let text = |key: &str| detail.config.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let page = WorkflowPage {
            layout,
            name: text("name"),
            description: text("description"),
            source: detail.source.to_string(),
            errors: linted.errors,
            warnings: linted.warnings.into_iter().map(|w| (w.code, w.message)).collect(),
            graph,
            yaml: std::fs::read_to_string(&detail.path).unwrap_or_default(),
            id,
            schedules: Vec::new(),
            paused: false,
        };
        Ok((page, scheduled))
    })
    .await?;
    let (mut page, scope) = page;
    let shown = runs.schedules(&scope, Some(&page.id)).await?;
    page.paused = shown.iter().any(|s| s.paused);
    page.schedules = shown.into_iter().map(ScheduleRow::from).collect();
    Ok(html(&page))
}

/// The Pause / Resume form.
#[derive(Debug, Deserialize)]
pub(crate) struct SchedulesForm {
    csrf: String,
    /// `true` pauses the workflow's schedules, `false` resumes them (read after the form token is checked).
    #[serde(default)]
    paused: String,
}

/// `POST /workflows/{id}/schedules`: pauses or resumes the workflow's schedules, then shows its page again.
pub(crate) async fn schedules(
    State(web): State<Web>,
    visit: Visit,
    Path(id): Path<String>,
    Query(q): Query<SourceParam>,
    Form(form): Form<SchedulesForm>,
) -> Result<Redirect, PageError> {
    check_csrf(&web, &visit.headers, &form.csrf)?;
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let paused = match form.paused.as_str() {
        "true" => true,
        "false" => false,
        other => {
            let message = format!("paused must be true (pause) or false (resume), not '{other}'");
            return Err(ApiError::roscoe(axum::http::StatusCode::BAD_REQUEST, "invalid_input", message).into());
        }
    };
    let source = q.source.unwrap_or(Source::Repo);
    web.runs.set_schedules_paused(&schedule_scope(&ws, source), &id, paused, &visit.actor()?).await?;
    Ok(Redirect::to(&format!("/workflows/{id}?project={}&source={source}", ws.key)))
}

/// The start form.
#[derive(Debug, Deserialize)]
pub(crate) struct StartForm {
    csrf: String,
    #[serde(default)]
    input: String,
}

/// `POST /workflows/{id}/start`: starts a run (`source: "web"`) and shows it.
pub(crate) async fn start(
    State(web): State<Web>,
    visit: Visit,
    Path(id): Path<String>,
    Query(q): Query<SourceParam>,
    Form(form): Form<StartForm>,
) -> Result<Redirect, PageError> {
    check_csrf(&web, &visit.headers, &form.csrf)?;
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let input = match form.input.trim() {
        "" | "{}" => None,
        text => Some(serde_json::from_str::<Value>(text).map_err(|e| {
            ApiError::roscoe(axum::http::StatusCode::BAD_REQUEST, "invalid_input", format!("the input is not JSON: {e}"))
        })?),
    };
    let started = web.runs.start_workflow(&ws.scope, &id, q.source, input, &visit.actor()?).await?;
    Ok(Redirect::to(&format!("/runs/{}?project={}", started.result.run_id, ws.key)))
}
