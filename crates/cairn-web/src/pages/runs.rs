//! Run pages: the filterable list, the run page (graph coloured by node status, timeline with each node's input,
//! output, error and fan-out children, the pending step with one button per valid human transition, cancel and
//! retry) whose live part is re-rendered and pushed over SSE whenever the run tree's event log grows, the form
//! targets, and `/open/runs/{id}` — the deep link every run result carries.

use std::convert::Infallible;

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Redirect, Response};
use cairn_roscoe::runs::{ListRuns, RunSummary};
use futures::Stream;
use serde::Deserialize;
use serde_json::Value;

use chrono::{DateTime, Utc};

use super::run_form::{CsrfToken, RunForm, back};
use super::run_log::{self, ScriptLog};
use super::run_notifications::{self, NotificationView};
use super::paging::{self, PAGE_SIZE};
use super::{Layout, PageError, ProjectParam, html, Visit};
use crate::graph::Graph;
use crate::live::Watcher;
use crate::state::Web;
use crate::when::{Moment, duration, usd};
use crate::workspace::Workspace;

const STATUSES: [&str; 5] = ["running", "paused", "completed", "failed", "cancelled"];

#[derive(Template)]
#[template(path = "runs/list.html")]
struct ListPage {
    layout: Layout,
    rows: Vec<ListRow>,
    statuses: Vec<String>,
    status: String,
    workflow_id: String,
    /// The search box's text.
    search: String,
    /// Whether this is a later page (the list offers its newest page again).
    later: bool,
    /// The cursor of the next, older page; "" on the last.
    older: String,
}

/// One run in the list.
struct ListRow {
    run: RunSummary,
    started: Moment,
    /// How long it ran, or has been running.
    took: String,
    cost: String,
    /// Who started it (`Ada (person)`), or through what (`mcp`) for runs from before that was kept.
    started_by: String,
}

impl ListRow {
    fn of(run: RunSummary) -> ListRow {
        let started = Moment::of(&run.started_at);
        ListRow {
            took: took(&run.started_at, run.completed_at.as_deref().unwrap_or_default()),
            cost: usd(run.total_cost_usd),
            started_by: run.started_by.clone().unwrap_or_else(|| run.source.clone()),
            started,
            run,
        }
    }
}

/// `GET /runs`'s query: the filters, the search text and the page's cursor.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListParams {
    project: Option<String>,
    #[serde(default)]
    status: String,
    #[serde(default)]
    workflow_id: String,
    /// Text the run id or the workflow's id or name contains.
    #[serde(default)]
    q: String,
    /// Where the previous page ended (`paging::cursor`).
    #[serde(default)]
    after: String,
    #[serde(default)]
    include_children: bool,
}

/// The live part of the run page.
#[derive(Debug, Clone)]
pub(crate) struct RunLive {
    run_id: String,
    project: String,
    workflow_name: String,
    status: String,
    error: String,
    events: i64,
    pending: Option<Pending>,
    cancellable: bool,
    retryable: bool,
    /// The run's input, pretty JSON ("" when none).
    input: String,
    /// Starting its workflow again with the same input: `(workflow id, its source, the input as JSON)`; top-level
    /// runs only.
    rerun: Option<(String, String, String)>,
    output: Option<String>,
    children: Vec<String>,
    timeline: Vec<NodeView>,
    /// The workflow's nodes that have not run yet (their graph links lead here).
    not_run: Vec<(String, String)>,
    csrf: String,
    /// Who started the run (`Ada (person)`), when known.
    started_by: String,
    started: Moment,
    /// How long it ran, or has been running.
    took: String,
    /// Cost and tokens over the run tree.
    total_cost: String,
    tokens: String,
    /// Who did what to the run tree: starts, decisions, cancels, retries.
    actions: Vec<ActionView>,
    /// The tree's model spend: `$0.0012 · 1200 in / 300 out tokens · metered`.
    cost: String,
    /// Why the run paused before its next model calls, while it waits for a larger budget.
    budget_hold: Option<BudgetHold>,
}

/// A run paused on its budget: what it says, and the limits now.
#[derive(Debug, Clone)]
struct BudgetHold {
    message: String,
    usd: String,
    tokens: String,
}

/// One recorded action on the run tree.
#[derive(Debug, Clone)]
struct ActionView {
    at: Moment,
    action: String,
    principal: String,
    via: String,
}

#[derive(Debug, Clone)]
struct Pending {
    node_id: String,
    node_type: String,
    prompt: String,
    /// `(transition, its label or the transition itself)`.
    choices: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
struct NodeView {
    node_id: String,
    node_type: String,
    status: String,
    event: String,
    iteration: i64,
    attempts: i64,
    started: Moment,
    duration: String,
    model: String,
    tokens: String,
    cost: String,
    input: String,
    output: String,
    error: String,
    child_run_id: String,
    children: Vec<NodeView>,
    /// Who made a human node's decision, and when.
    decided_by: String,
    /// The comment given with that decision.
    comment: String,
    /// A script node's log, shown instead of its output (live while it runs).
    log: Option<ScriptLog>,
    /// The model calls the server made for it: `claude-sonnet-4-5 · 120 in / 40 out tokens · $0.0010 · 812 ms`.
    calls: String,
    decided: Moment,
    /// `node-<id>` on the node's latest run (where the graph's link leads), "" on earlier ones.
    anchor: String,
}

#[derive(Template)]
#[template(path = "runs/page.html")]
struct RunPage {
    layout: Layout,
    live: RunLive,
    graph: Graph,
    /// What the run told the operator's notification targets, outside the live part.
    notifications: Vec<NotificationView>,
}

#[derive(Template)]
#[template(path = "runs/_live.html")]
struct LiveFragment {
    live: RunLive,
    graph: Graph,
}

/// `GET /runs`: a page of runs, newest first, narrowed by status, workflow and a search.
pub(crate) async fn list(
    State(web): State<Web>,
    visit: Visit,
    Query(q): Query<ListParams>,
) -> Result<Response, PageError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let layout = Layout::new(&web, &visit, &ws).await?;
    let query = ListRuns {
        limit: Some(PAGE_SIZE as i64 + 1),
        status: Some(q.status.clone()).filter(|s| !s.is_empty()),
        workflow_id: Some(q.workflow_id.clone()).filter(|s| !s.is_empty()),
        include_children: q.include_children,
        search: q.q.clone(),
        after: paging::after(&q.after),
    };
    let found = web.runs.list_runs(&ws.scope, &query).await?;
    let (found, older) = paging::page(found, |r| (epoch_ms(&r.started_at), r.id.clone()));
    let page = ListPage {
        layout: layout.clone(),
        rows: found.into_iter().map(ListRow::of).collect(),
        statuses: STATUSES.map(String::from).to_vec(),
        status: q.status,
        workflow_id: q.workflow_id,
        search: q.q,
        later: query.after.is_some(),
        older,
    };
    Ok(html(&page))
}

/// Epoch milliseconds of an RFC 3339 time (0 when it is not one).
fn epoch_ms(text: &str) -> i64 {
    DateTime::parse_from_rfc3339(text).map(|t| t.timestamp_millis()).unwrap_or_default()
}

/// How long from `started` to `completed` (RFC 3339), or until now while `completed` is "": `3.2 s`, `1 min so far`.
fn took(started: &str, completed: &str) -> String {
    match (DateTime::parse_from_rfc3339(started), DateTime::parse_from_rfc3339(completed)) {
        (Ok(start), Ok(end)) => duration((end - start).num_milliseconds()),
        (Ok(start), Err(_)) => {
            format!("{} so far", duration((Utc::now() - start.with_timezone(&Utc)).num_milliseconds()))
        }
        _ => String::new(),
    }
}

/// A value as a page shows it: text as it is, anything else as pretty JSON, nothing as "".
pub(crate) fn text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// "1,234 in · 567 out", or "" without tokens.
fn tokens(input: i64, output: i64) -> String {
    if input == 0 && output == 0 { String::new() } else { format!("{input} in · {output} out") }
}

fn node_view(n: &Value) -> NodeView {
    let s = |key: &str| n[key].as_str().unwrap_or_default().to_owned();
    let cost = n["costUsd"].as_f64().unwrap_or(0.0);
    let input_tokens = n["inputTokens"].as_i64().unwrap_or(0);
    let output_tokens = n["outputTokens"].as_i64().unwrap_or(0);
    let principal = n["output"]["principal"].as_str().unwrap_or_default().to_owned();
    let log = ScriptLog::of(n["nodeType"].as_str().unwrap_or_default(), &n["output"]);
    NodeView {
        node_id: s("nodeId"),
        node_type: s("nodeType"),
        status: s("status"),
        event: s("event"),
        iteration: n["iteration"].as_i64().unwrap_or(1),
        attempts: n["attempts"].as_i64().unwrap_or(0),
        started: Moment::of(&s("startedAt")),
        duration: n["durationMs"].as_i64().map(duration).unwrap_or_default(),
        model: s("model"),
        tokens: tokens(input_tokens, output_tokens),
        cost: if cost > 0.0 || input_tokens > 0 { usd(cost) } else { String::new() },
        input: text(&n["input"]),
        output: if log.is_some() { String::new() } else { text(&n["output"]) },
        log,
        error: s("error"),
        child_run_id: s("childRunId"),
        children: n["children"].as_array().map(|c| c.iter().map(node_view).collect()).unwrap_or_default(),
        decided: if principal.is_empty() { Moment::default() } else { Moment::of(&s("completedAt")) },
        decided_by: principal,
        comment: n["output"]["comment"].as_str().unwrap_or_default().to_owned(),
        anchor: String::new(),
        calls: calls_line(n),
    }
}

/// USD as the page shows it, or `unknown`.
fn usd_or_unknown(value: &Value) -> String {
    value.as_f64().map_or_else(|| "unknown".to_owned(), usd)
}

/// A node's model calls in one line (empty when the server made none): models, tokens, cost, slowest call.
fn calls_line(n: &Value) -> String {
    let calls = n["calls"].as_array().cloned().unwrap_or_default();
    if calls.is_empty() {
        return String::new();
    }
    let mut models: Vec<&str> = calls.iter().filter_map(|c| c["model"].as_str()).collect();
    models.dedup();
    let cost = &n["cost"];
    let unpriced = cost["unpricedCalls"].as_i64().unwrap_or(0) > 0;
    format!(
        "{} · {} call(s) · {} in / {} out tokens · {}{} · {} ms",
        models.join(", "),
        calls.len(),
        cost["inputTokens"],
        cost["outputTokens"],
        usd_or_unknown(&cost["totalCostUsd"]),
        if unpriced { " (some unpriced)" } else { "" },
        n["latencyMs"]
    )
}

/// The run tree's spend in one line.
fn cost_line(status: &cairn_roscoe::runs::AdvanceResult) -> String {
    format!(
        "{} · {} in / {} out tokens · {}",
        usd(status.total_cost_usd),
        status.input_tokens,
        status.output_tokens,
        status.billing_mode
    )
}

/// Everything the live part shows, read through the run facade.
async fn run_live(web: &Web, ws: &Workspace, run_id: &str, csrf: String) -> Result<(RunLive, Graph), PageError> {
    let events = Watcher::count(web, run_id).await?;
    let history = web.runs.get_run_history(&ws.scope, run_id).await?;
    let status = web.runs.get_run_status(&ws.scope, run_id).await?;
    let mut graph = web.runs.run_diagram(&ws.scope, run_id).await.map(Graph::from).unwrap_or_default();
    let run = &history.run;
    let run_status = run["status"].as_str().unwrap_or_default().to_owned();
    let top_level = run["parentRunId"].is_null();
    let cost = cost_line(&status);
    let budget_hold = status.pending_step.as_ref().and_then(|p| p.budget_exceeded.as_ref()).map(|hold| BudgetHold {
        message: hold.message.clone(),
        usd: hold.limit.usd.map(|u| u.to_string()).unwrap_or_default(),
        tokens: hold.limit.tokens.map(|t| t.to_string()).unwrap_or_default(),
    });
    let pending = status.pending_step.filter(|_| matches!(run_status.as_str(), "paused" | "running")).map(|p| {
        let label = |event: &str| p.transitions.iter().find(|t| t.event == event).and_then(|t| t.label.clone());
        Pending {
            choices: p.valid_transitions.iter().map(|t| (t.clone(), label(t).unwrap_or_else(|| t.clone()))).collect(),
            node_id: p.node_id,
            node_type: p.node_type,
            prompt: p.prompt,
        }
    });
    graph.current = pending.as_ref().map(|p| p.node_id.clone());
    graph.mark_taken(history.nodes.iter().filter_map(|n| Some((n["nodeId"].as_str()?, n["event"].as_str()?))));
    let mut timeline: Vec<NodeView> = history.nodes.iter().map(node_view).collect();
    for (view, node) in timeline.iter_mut().zip(&history.nodes) {
        if let Some(log) = run_log::running(web, ws, run_id, node).await? {
            view.log = Some(log);
        }
    }
    for i in 0..timeline.len() {
        if !timeline[i + 1..].iter().any(|later| later.node_id == timeline[i].node_id) {
            timeline[i].anchor = format!("node-{}", timeline[i].node_id);
        }
    }
    let not_run = graph
        .nodes
        .iter()
        .filter(|n| !timeline.iter().any(|t| t.node_id == n.id))
        .map(|n| (n.id.clone(), n.label.clone()))
        .collect();
    let s = |key: &str| run[key].as_str().unwrap_or_default().to_owned();
    let took = took(&s("startedAt"), &s("completedAt"));
    let live = RunLive {
        run_id: run_id.to_owned(),
        project: ws.key.clone(),
        workflow_name: s("workflowName"),
        error: s("error"),
        events,
        pending,
        cancellable: matches!(run_status.as_str(), "running" | "paused"),
        retryable: top_level && matches!(run_status.as_str(), "failed" | "cancelled"),
        input: match &run["context"]["input"] {
            Value::Object(map) if map.is_empty() => String::new(),
            input => text(input),
        },
        rerun: top_level.then(|| (s("workflowId"), s("workflowSource"), run["context"]["input"].to_string())),
        output: (run_status == "completed").then(|| text(&run["output"])),
        children: run["childRunIds"]
            .as_array()
            .map(|c| c.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
            .unwrap_or_default(),
        timeline,
        not_run,
        status: run_status,
        csrf,
        started_by: s("startedBy"),
        started: Moment::of(&s("startedAt")),
        took,
        total_cost: usd(status.total_cost_usd),
        tokens: tokens(status.input_tokens, status.output_tokens),
        actions: history
            .actions
            .iter()
            .map(|a| {
                let s = |key: &str| a[key].as_str().unwrap_or_default().to_owned();
                ActionView { at: Moment::of(&s("at")), action: s("action"), principal: s("principal"), via: s("via") }
            })
            .collect(),
        cost,
        budget_hold,
    };
    Ok((live, graph))
}

/// `GET /runs/{id}`.
pub(crate) async fn page(
    State(web): State<Web>,
    visit: Visit,
    Path(id): Path<String>,
    Query(q): Query<ProjectParam>,
) -> Result<Response, PageError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let layout = Layout::new(&web, &visit, &ws).await?;
    let (live, graph) = run_live(&web, &ws, &id, layout.csrf.clone()).await?;
    let notifications = run_notifications::of_run(&web, &ws, &id).await?;
    Ok(html(&RunPage { layout: layout.clone(), live, graph, notifications }))
}

/// `?project=&since=` of the live stream.
#[derive(Debug, Deserialize)]
pub(crate) struct LiveParam {
    project: Option<String>,
    /// The event count the page was rendered at.
    #[serde(default)]
    since: i64,
}

/// `GET /runs/{id}/live`: SSE; each message is the re-rendered live part (htmx swaps it in).
pub(crate) async fn live(
    State(web): State<Web>,
    visit: Visit,
    Path(id): Path<String>,
    Query(q): Query<LiveParam>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, PageError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    web.runs.get_run_history(&ws.scope, &id).await?;
    let csrf = web.csrf.token(&visit.headers);
    let watcher = Watcher::new(web.clone(), id, q.since);
    let stream = futures::stream::unfold((watcher, web, ws, csrf), |(mut watcher, web, ws, csrf)| async move {
        let body = match watcher.changed().await? {
            Ok(()) => match run_live(&web, &ws, watcher.run_id(), csrf.clone()).await {
                Ok((live, graph)) => LiveFragment { live, graph }.render().unwrap_or_default(),
                Err(error) => format!("<p class=\"error\">{}</p>", escape(error.0.message())),
            },
            Err(error) => format!("<p class=\"error\">{}</p>", escape(error.message())),
        };
        Some((Ok(Event::default().data(body)), (watcher, web, ws, csrf)))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The human decision form.
#[derive(Debug, Deserialize)]
pub(crate) struct ResumeForm {
    csrf: String,
    transition: String,
    #[serde(default)]
    comment: String,
    #[serde(default)]
    node_id: String,
    /// `home` when the form is the home page's inbox, which it goes back to.
    #[serde(default)]
    back: String,
}

/// `POST /runs/{id}/resume`: the person's choice (`decidedBy: "web"`).
pub(crate) async fn resume(State(web): State<Web>, posted: RunForm<ResumeForm>) -> Result<Redirect, PageError> {
    let RunForm { id, ws, visit, form } = posted;
    let comment = Some(form.comment).filter(|c| !c.trim().is_empty());
    let node_id = Some(form.node_id).filter(|n| !n.is_empty());
    web.runs.resume(&ws.scope, &id, node_id, form.transition, comment, &visit.actor()?).await?;
    if form.back == "home" {
        return Ok(Redirect::to(&format!("/?project={}", ws.key)));
    }
    back(&id, &ws)
}

impl CsrfToken for ResumeForm {
    fn csrf(&self) -> &str {
        &self.csrf
    }
}

/// The budget form: new limits, empty for none.
#[derive(Debug, Deserialize)]
pub(crate) struct BudgetForm {
    csrf: String,
    #[serde(default)]
    usd: String,
    #[serde(default)]
    tokens: String,
}

impl CsrfToken for BudgetForm {
    fn csrf(&self) -> &str {
        &self.csrf
    }
}

/// `POST /runs/{id}/budget`: raises the run tree's budget; a run paused on it continues.
pub(crate) async fn budget(State(web): State<Web>, posted: RunForm<BudgetForm>) -> Result<Redirect, PageError> {
    let bad = |what: &str| cairn_roscoe::Error::InvalidInput(format!("the budget's {what} must be a number, 0 or more"));
    let usd = match posted.form.usd.trim() {
        "" => None,
        text => Some(text.parse::<f64>().map_err(|_| bad("USD"))?),
    };
    let tokens = match posted.form.tokens.trim() {
        "" => None,
        text => Some(text.parse::<i64>().map_err(|_| bad("tokens"))?),
    };
    let budget = cairn_roscoe::Budget { usd, tokens };
    web.runs.set_budget(&posted.ws.scope, &posted.id, budget, &posted.actor()?).await?;
    posted.back()
}

/// `POST /runs/{id}/cancel`.
pub(crate) async fn cancel(State(web): State<Web>, posted: RunForm) -> Result<Redirect, PageError> {
    let reason = Some("cancelled from the web UI".into());
    web.runs.cancel_run(&posted.ws.scope, &posted.id, reason, &posted.actor()?).await?;
    posted.back()
}

/// `POST /runs/{id}/retry`.
pub(crate) async fn retry(State(web): State<Web>, posted: RunForm) -> Result<Redirect, PageError> {
    web.runs.retry_run(&posted.ws.scope, &posted.id, &posted.actor()?).await?;
    posted.back()
}

/// `GET /open/runs/{id}?project=`: the run's page.
pub(crate) async fn open(
    State(web): State<Web>,
    Path(id): Path<String>,
    Query(q): Query<ProjectParam>,
) -> Result<Redirect, PageError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    back(&id, &ws)
}
