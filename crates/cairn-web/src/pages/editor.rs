//! The workflow editor: `/workflows/{id}/edit` and `/workflows/new` (from a template). The YAML is a form's textarea
//! (so saving works without JavaScript); `editor.js` turns it into CodeMirror 5 (vendored, YAML mode, line numbers)
//! and, as you type, posts the text to `/workflows/check`, which answers the validation and lint diagnostics with
//! their lines and the graph of the draft as SVG. Saving goes through the authoring facade: `update_workflow` refusing
//! the save when the file changed since the page read it (`stale_edit`), or `create_workflow` for a new one (its
//! `name` is its id).

use askama::Template;
use axum::Form;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use cairn_roscoe::definition::Severity;
use cairn_roscoe::{Body, Source, Subject};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Layout, PageError, check_csrf, html, Visit};
use crate::error::ApiError;
use crate::graph::Graph;
use crate::state::{Web, blocking};
use crate::workspace::Workspace;

/// What "new workflow" starts from: an agent drafts, a person decides, a loop back on rework.
const TEMPLATE: &str = "name: my-workflow\ndescription: An agent drafts, a person decides\ninitial: draft\nnodes:\n  \
draft:\n    type: ai_agent\n    label: Draft\n    config:\n      prompt: \"Draft the change for {{ input.topic }}\"\n    \
transitions:\n      success: review\n  review:\n    type: human\n    label: Review\n    config:\n      prompt: \
\"Ship {{ draft.text }}?\"\n      labels: { ship: Ship it, rework: Send back }\n    transitions:\n      ship: $end\n      \
rework: draft\ninputs:\n  topic: { type: string, required: true }\n";

/// One finding on a line, as the editor shows it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Finding {
    /// 1-based; 0 when the finding has no line.
    line: u64,
    /// `error` or `warning`.
    severity: &'static str,
    /// The stable code.
    code: String,
    /// What is wrong and how to fix it.
    message: String,
}

#[derive(Template)]
#[template(path = "workflows/editor.html")]
struct EditorPage {
    layout: Layout,
    /// The workflow's id; "" for a new one.
    id: String,
    source: String,
    yaml: String,
    findings: Vec<Finding>,
    graph: Graph,
}

/// `?project=&source=`.
#[derive(Debug, Deserialize)]
pub(crate) struct EditParam {
    project: Option<String>,
    source: Option<Source>,
}

/// The findings and the graph of `text` (the workflow `id`, or a new one).
async fn check(web: &Web, ws: &Workspace, text: String, id: Option<String>) -> Result<(Vec<Finding>, Graph), PageError> {
    let roscoe = web.roscoe.clone();
    let scope = ws.scope.clone();
    blocking(move || {
        let findings = roscoe
            .diagnose(&scope, &text, id)?
            .into_iter()
            .map(|d| Finding {
                line: d.line.unwrap_or(0),
                severity: if d.severity == Severity::Error { "error" } else { "warning" },
                code: d.code.as_str().to_owned(),
                message: d.message,
            })
            .collect();
        let graph = roscoe
            .workflow_diagram(&scope, &Subject::Body(Body::Yaml(text)))
            .map(Graph::from)
            .unwrap_or_default();
        Ok((findings, graph))
    })
    .await
    .map_err(PageError::from)
}

/// `GET /workflows/{id}/edit`.
pub(crate) async fn edit(
    State(web): State<Web>,
    visit: Visit,
    Path(id): Path<String>,
    Query(q): Query<EditParam>,
) -> Result<Response, PageError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let layout = Layout::new(&web, &visit, &ws).await?;
    let roscoe = web.roscoe.clone();
    let scope = ws.scope.clone();
    let wanted = id.clone();
    let (yaml, source) = blocking(move || {
        let detail = roscoe.get_workflow(&scope, &wanted, q.source)?;
        let yaml = std::fs::read_to_string(&detail.path).map_err(|e| cairn_roscoe::Error::Internal(e.to_string()))?;
        Ok((yaml, detail.source.to_string()))
    })
    .await?;
    let (findings, graph) = check(&web, &ws, yaml.clone(), Some(id.clone())).await?;
    Ok(html(&EditorPage { layout: layout.clone(), id, source, yaml, findings, graph }))
}

/// `GET /workflows/new`: the editor on the template.
pub(crate) async fn new(State(web): State<Web>, visit: Visit, Query(q): Query<EditParam>) -> Result<Response, PageError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let layout = Layout::new(&web, &visit, &ws).await?;
    let (findings, graph) = check(&web, &ws, TEMPLATE.to_owned(), None).await?;
    let page = EditorPage { layout: layout.clone(), id: String::new(), source: String::new(), yaml: TEMPLATE.to_owned(), findings, graph };
    Ok(html(&page))
}

/// A textarea's text as the file holds it: browsers submit a textarea's line breaks as CR LF.
fn lines(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// The editor's form.
#[derive(Debug, Deserialize)]
pub(crate) struct SaveForm {
    csrf: String,
    #[serde(default)]
    yaml: String,
    /// The text as the page read it (an edit of a stored workflow).
    #[serde(default)]
    original: String,
}

/// `POST /workflows/{id}/edit`: saves through `update_workflow`, unless the file changed since the page read it.
pub(crate) async fn save(
    State(web): State<Web>,
    visit: Visit,
    Path(id): Path<String>,
    Query(q): Query<EditParam>,
    Form(form): Form<SaveForm>,
) -> Result<Redirect, PageError> {
    write(&web, &visit, q, form, Some(id)).await
}

/// `POST /workflows/new`: creates the workflow through `create_workflow`.
pub(crate) async fn create(
    State(web): State<Web>,
    visit: Visit,
    Query(q): Query<EditParam>,
    Form(form): Form<SaveForm>,
) -> Result<Redirect, PageError> {
    write(&web, &visit, q, form, None).await
}

/// Writes the editor's text as the signed-in person: over workflow `id`, or as a new workflow (`None`) whose id is its
/// `name`. Answers the workflow's page.
async fn write(web: &Web, visit: &Visit, q: EditParam, form: SaveForm, id: Option<String>) -> Result<Redirect, PageError> {
    check_csrf(web, &visit.headers, &form.csrf)?;
    let ws = Workspace::resolve(web, q.project.as_deref()).await?;
    let actor = visit.actor()?;
    let roscoe = web.roscoe.clone();
    let scope = ws.scope.clone();
    let yaml = Body::Yaml(lines(&form.yaml));
    let (id, original) = match id {
        Some(id) => (id, Some(lines(&form.original))),
        None => (name(&form.yaml)?, None),
    };
    let (wanted, writer) = (id.clone(), actor.clone());
    let (source, path) = blocking(move || {
        Ok(match original {
            Some(original) => {
                let updated = roscoe.update_workflow_from(&scope, &wanted, &yaml, q.source, Some(&original), &writer)?;
                (updated.source, updated.path)
            }
            None => {
                let created = roscoe.create_workflow(&scope, &wanted, &yaml, q.source, &writer)?;
                (created.source, created.path)
            }
        })
    })
    .await?;
    web.runs.approve_saved(&ws.scope, &id, &path, &actor).await;
    Ok(Redirect::to(&format!("/workflows/{id}?project={}&source={source}", ws.key)))
}

/// The `name` of a new workflow's YAML: its id.
fn name(yaml: &str) -> Result<String, PageError> {
    cairn_yaml::parse(yaml)
        .ok()
        .and_then(|doc| doc.value.get("name").and_then(Value::as_str).map(str::to_owned))
        .ok_or_else(|| {
            ApiError::roscoe(StatusCode::BAD_REQUEST, "invalid_config", "give the workflow a `name`: it is the workflow's id")
                .into()
        })
}

/// What the editor posts as you type.
#[derive(Debug, Deserialize)]
pub(crate) struct CheckForm {
    csrf: String,
    #[serde(default)]
    yaml: String,
    #[serde(default)]
    id: String,
}

/// `POST /workflows/check?project=`: `{ findings: [{ line, severity, code, message }], graph: "<svg…>" }`.
pub(crate) async fn check_draft(
    State(web): State<Web>,
    visit: Visit,
    Query(q): Query<EditParam>,
    Form(form): Form<CheckForm>,
) -> Result<Response, PageError> {
    check_csrf(&web, &visit.headers, &form.csrf)?;
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let id = Some(form.id).filter(|id| !id.is_empty());
    let (findings, graph) = check(&web, &ws, lines(&form.yaml), id).await?;
    let body = serde_json::json!({ "findings": findings, "graph": graph.svg() });
    Ok(Json::<Value>(body).into_response())
}
