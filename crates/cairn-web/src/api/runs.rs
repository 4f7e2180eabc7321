//! `/api/runs…`: the run facade over HTTP — list, history, live events (SSE), start (`source: "web"`), resume a
//! human step (`decidedBy: "web"`), cancel and retry — with the run tools' codes; a run of another project is
//! `404 Run not found.`.

use std::convert::Infallible;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use cairn_roscoe::runs::ListRuns;
use cairn_roscoe::{Execution, StartOptions, StartRequest};
use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::{IntoParams, ToSchema};

use super::{ProjectQuery, SourceArg};
use crate::access::Principal;
use crate::error::ApiError;
use crate::json_only::OptionalJson;
use crate::live::Watcher;
use crate::state::Web;
use crate::workspace::Workspace;

/// `GET /api/runs` filters.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListQuery {
    /// `global` or a project id.
    pub(crate) project: Option<String>,
    /// running, paused, completed, failed or cancelled.
    pub(crate) status: Option<String>,
    /// Only runs of this workflow.
    pub(crate) workflow_id: Option<String>,
    /// 1–200, default 20.
    pub(crate) limit: Option<i64>,
    /// Include subworkflow child runs.
    #[serde(default)]
    pub(crate) include_children: bool,
}

/// Starts a run.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct StartBody {
    /// The workflow id.
    workflow_id: String,
    /// Its source (default repo first).
    source: Option<SourceArg>,
    /// Run inputs.
    #[schema(value_type = Option<Object>)]
    input: Option<Value>,
    /// Who runs its AI steps: `server` (the default here: the server calls its model providers) or `host` (left for
    /// an MCP host to answer).
    execution: Option<ExecutionArg>,
    /// The most the run tree may spend on model calls: `{ usd?, tokens? }` (default: the workflow's, else
    /// `roscoe.yaml`'s).
    budget: Option<BudgetBody>,
}

/// Who runs a run's AI steps.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ExecutionArg {
    /// Handed back to an MCP host.
    Host,
    /// Run by the server through its model providers.
    Server,
}

/// A budget: at most `usd` and `tokens` (input + output) over all model calls of a run tree.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BudgetBody {
    /// USD limit.
    usd: Option<f64>,
    /// Token limit.
    tokens: Option<i64>,
}

impl From<BudgetBody> for cairn_roscoe::Budget {
    fn from(b: BudgetBody) -> Self {
        cairn_roscoe::Budget { usd: b.usd, tokens: b.tokens }
    }
}

/// A human decision.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ResumeBody {
    /// One of the pending step's `validTransitions` (any case) or its 1-based number.
    transition: String,
    /// The person's comment.
    comment: Option<String>,
    /// The pending step's node, to refuse a stale choice.
    node_id: Option<String>,
}

/// Why a run is cancelled.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CancelBody {
    /// Shown as the run's error.
    reason: Option<String>,
}

/// `/api/runs/{id}/events` parameters.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct EventsQuery {
    /// `global` or a project id.
    project: Option<String>,
}

/// One entry of the run event stream (the `data` of each `state` event).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunEvent {
    /// The run of the tree that changed.
    run_id: String,
    /// That run's version after the change.
    seq: i64,
    /// Epoch ms.
    ts: i64,
    /// The event type.
    #[serde(rename = "type")]
    kind: String,
    /// The event's data (`{ status, node }`).
    #[schema(value_type = Object)]
    data: Value,
}

fn json<T: Serialize>(value: T) -> Json<Value> {
    Json(serde_json::to_value(value).unwrap_or(Value::Null))
}

/// The workspace's runs, newest first (`list_runs`).
#[utoipa::path(get, path = "/api/runs", tag = "runs", params(ListQuery),
    responses((status = 200, description = "`[{ id, workflowId, workflowName, status, startedAt, … }]`", body = Object)))]
pub(crate) async fn list(State(web): State<Web>, Query(q): Query<ListQuery>) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let query = ListRuns {
        limit: q.limit,
        status: q.status.filter(|s| !s.is_empty()),
        workflow_id: q.workflow_id.filter(|s| !s.is_empty()),
        include_children: q.include_children,
        ..ListRuns::default()
    };
    Ok(json(web.runs.list_runs(&ws.scope, &query).await?))
}

/// One run and its node runs, fan-out children nested (`get_run_history`).
#[utoipa::path(get, path = "/api/runs/{id}", tag = "runs", params(("id" = String, Path), ProjectQuery),
    responses((status = 200, description = "`{ run, nodes }`", body = Object), (status = 404, body = Object)))]
pub(crate) async fn get(
    State(web): State<Web>,
    Path(id): Path<String>,
    Query(q): Query<ProjectQuery>,
) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    Ok(json(web.runs.get_run_history(&ws.scope, &id).await?))
}

/// Server-Sent Events of the run's tree: every logged event as `event: state` (history first, then live), until
/// the run asked for ends or the server stops.
#[utoipa::path(get, path = "/api/runs/{id}/events", tag = "runs", params(("id" = String, Path), EventsQuery),
    responses((status = 200, description = "`text/event-stream` of `state` events", content_type = "text/event-stream",
        body = RunEvent), (status = 404, body = Object)))]
pub(crate) async fn events(
    State(web): State<Web>,
    Path(id): Path<String>,
    Query(q): Query<EventsQuery>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    web.runs.get_run_history(&ws.scope, &id).await?;
    let watcher = Watcher::new(web, id, -1);
    let stream = futures::stream::unfold((watcher, Vec::new(), false), |(mut watcher, mut queue, mut ended)| async move {
        loop {
            if let Some(event) = queue.pop() {
                return Some((Ok(event), (watcher, queue, ended)));
            }
            if ended {
                return None;
            }
            match watcher.changed().await? {
                Ok(()) => {}
                Err(error) => {
                    let event = Event::default().event("error").data(error.body.to_string());
                    return Some((Ok(event), (watcher, queue, true)));
                }
            }
            let fresh = match watcher.new_events().await {
                Ok(fresh) => fresh,
                Err(error) => {
                    let event = Event::default().event("error").data(error.body.to_string());
                    return Some((Ok(event), (watcher, queue, true)));
                }
            };
            for row in fresh {
                let data: Value = serde_json::from_str(&row.data).unwrap_or_else(|_| json!(row.data));
                let terminal = matches!(data["status"].as_str(), Some("completed" | "failed" | "cancelled"));
                ended |= terminal && row.run_id == watcher.run_id();
                let event = RunEvent { run_id: row.run_id.clone(), seq: row.seq, ts: row.ts, kind: row.kind, data };
                let body = serde_json::to_string(&event).unwrap_or_default();
                queue.insert(0, Event::default().event("state").id(format!("{}:{}", row.run_id, row.seq)).data(body));
            }
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// Starts a run of a workflow (`source: "web"`) and drives it to its first pause or its end. AI steps are left
/// for an agent to advance over MCP.
#[utoipa::path(post, path = "/api/runs", tag = "runs", params(ProjectQuery), request_body = StartBody,
    responses((status = 201, description = "`{ runId, status, url, workflow, narration, pendingStep?, … }`", body = Object),
        (status = 404, body = Object)))]
pub(crate) async fn start(
    State(web): State<Web>,
    principal: Principal,
    Query(q): Query<ProjectQuery>,
    Json(body): Json<StartBody>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let (source, actor) = (body.source.map(Into::into), principal.actor());
    let options = StartOptions {
        execution: body.execution.map(|e| match e {
            ExecutionArg::Host => Execution::Host,
            ExecutionArg::Server => Execution::Server,
        }),
        budget: body.budget.map(Into::into),
        ..StartOptions::default()
    };
    let (id, input) = (&body.workflow_id, body.input.as_ref());
    let start = StartRequest { scope: &ws.scope, id, source, input, actor: &actor };
    let started = web.runs.start_workflow_with(start, options).await?;
    Ok((StatusCode::CREATED, json(started)))
}

/// Sets the run tree's budget (`{ usd?, tokens? }`; a limit left out is removed); a run paused on its budget
/// continues, checked against the new one.
#[utoipa::path(post, path = "/api/runs/{id}/budget", tag = "runs", params(("id" = String, Path), ProjectQuery),
    request_body = BudgetBody, responses((status = 200, body = Object), (status = 400, body = Object),
        (status = 404, body = Object)))]
pub(crate) async fn budget(
    State(web): State<Web>,
    principal: Principal,
    Path(id): Path<String>,
    Query(q): Query<ProjectQuery>,
    Json(body): Json<BudgetBody>,
) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    Ok(json(web.runs.set_budget(&ws.scope, &id, body.into(), &principal.actor()).await?))
}

/// A person's decision at a pending human step (`resume_run`, decided by `web`).
#[utoipa::path(post, path = "/api/runs/{id}/resume", tag = "runs", params(("id" = String, Path), ProjectQuery),
    request_body = ResumeBody, responses((status = 200, body = Object), (status = 400, body = Object),
        (status = 409, body = Object)))]
pub(crate) async fn resume(
    State(web): State<Web>,
    principal: Principal,
    Path(id): Path<String>,
    Query(q): Query<ProjectQuery>,
    Json(body): Json<ResumeBody>,
) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let actor = principal.actor();
    Ok(json(web.runs.resume(&ws.scope, &id, body.node_id, body.transition, body.comment, &actor).await?))
}

/// Cancels the run's whole tree (`cancel_run`).
#[utoipa::path(post, path = "/api/runs/{id}/cancel", tag = "runs", params(("id" = String, Path), ProjectQuery),
    request_body(content = CancelBody, description = "optional"), responses((status = 200, body = Object),
        (status = 409, body = Object)))]
pub(crate) async fn cancel(
    State(web): State<Web>,
    principal: Principal,
    Path(id): Path<String>,
    Query(q): Query<ProjectQuery>,
    OptionalJson(body): OptionalJson<CancelBody>,
) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let reason = body.and_then(|b| b.reason);
    Ok(json(web.runs.cancel_run(&ws.scope, &id, reason, &principal.actor()).await?))
}

/// Re-drives a failed or cancelled run from where it stopped (`retry_run`).
#[utoipa::path(post, path = "/api/runs/{id}/retry", tag = "runs", params(("id" = String, Path), ProjectQuery),
    responses((status = 200, body = Object), (status = 409, body = Object)))]
pub(crate) async fn retry(
    State(web): State<Web>,
    principal: Principal,
    Path(id): Path<String>,
    Query(q): Query<ProjectQuery>,
) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    Ok(json(web.runs.retry_run(&ws.scope, &id, &principal.actor()).await?))
}
