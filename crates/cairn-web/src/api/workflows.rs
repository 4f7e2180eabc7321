//! `/api/workflows…`, `/api/validate`, `/api/lint`, `/api/diagram`: the roscoe authoring facade over HTTP, with the
//! writer tools' codes (400 validation, 404 not found, 409 conflict or referenced).

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use cairn_roscoe::{Actor, Body, Subject};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use super::{ProjectQuery, SourceArg};
use crate::access::Principal;
use crate::error::ApiError;
use crate::state::{Web, blocking};
use crate::workspace::Workspace;

/// `?project=&source=`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct WorkflowQuery {
    /// `global` or a project id; default: the server's `--project`, else global.
    project: Option<String>,
    /// Only this source (default: repo first).
    source: Option<SourceArg>,
}

/// `DELETE` parameters.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct DeleteQuery {
    /// `global` or a project id.
    project: Option<String>,
    /// Only this source.
    source: Option<SourceArg>,
    /// Must be `true`: deleting is permanent.
    #[serde(default)]
    confirm: bool,
    /// Delete even though subworkflow nodes use it.
    #[serde(default)]
    force: bool,
}

/// A new workflow.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateBody {
    /// The id (file stem).
    id: String,
    /// Where to write it (default: repo when the project has one).
    source: Option<SourceArg>,
    /// The workflow as YAML text (or give `config`).
    yaml: Option<String>,
    /// The workflow as an object (or give `yaml`).
    #[schema(value_type = Option<Object>)]
    config: Option<Value>,
}

/// New contents.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateBody {
    /// YAML text (or give `config`).
    yaml: Option<String>,
    /// An object (or give `yaml`).
    #[schema(value_type = Option<Object>)]
    config: Option<Value>,
}

/// What to validate, lint or draw: inline contents, or a stored workflow.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SubjectBody {
    /// YAML text.
    yaml: Option<String>,
    /// An object.
    #[schema(value_type = Option<Object>)]
    config: Option<Value>,
    /// A stored workflow's id.
    id: Option<String>,
    /// The stored workflow's source.
    source: Option<SourceArg>,
}

/// `move`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MoveBody {
    /// The source to move it to.
    to: SourceArg,
    /// The source it is in (default: where the id resolves).
    from: Option<SourceArg>,
}

/// `duplicate`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct DuplicateBody {
    /// The copy's id.
    to_id: String,
    /// The original's source.
    source: Option<SourceArg>,
    /// The copy's source (default: the original's).
    to_source: Option<SourceArg>,
}

/// `rename`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RenameBody {
    /// The new id.
    new_id: String,
    /// Its source.
    source: Option<SourceArg>,
    /// Rewrite subworkflow nodes that name the old id (default true).
    rewrite_references: Option<bool>,
}

fn json<T: Serialize>(value: T) -> Result<Json<Value>, ApiError> {
    serde_json::to_value(value).map(Json).map_err(|e| {
        ApiError::roscoe(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("cannot write the result: {e}"))
    })
}

/// Lists the workflows of both sources (`list_workflows`).
#[utoipa::path(get, path = "/api/workflows", tag = "workflows", params(WorkflowQuery),
    responses((status = 200, description = "`[{ id, name, description, source, shadowed }]`", body = Object)))]
pub(crate) async fn list(State(web): State<Web>, Query(q): Query<WorkflowQuery>) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    blocking(move || json(web.roscoe.list_workflows(&ws.scope, q.source.map(Into::into))?)).await
}

/// One workflow's config, source, path and YAML text (`get_workflow`).
#[utoipa::path(get, path = "/api/workflows/{id}", tag = "workflows", params(("id" = String, Path), WorkflowQuery),
    responses((status = 200, body = Object), (status = 404, body = Object)))]
pub(crate) async fn get(
    State(web): State<Web>,
    Path(id): Path<String>,
    Query(q): Query<WorkflowQuery>,
) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    blocking(move || {
        let detail = web.roscoe.get_workflow(&ws.scope, &id, q.source.map(Into::into))?;
        let yaml = std::fs::read_to_string(&detail.path).ok();
        let mut value = json(detail)?.0;
        value["yaml"] = yaml.map_or(Value::Null, Value::String);
        Ok(Json(value))
    })
    .await
}

/// Writes a new workflow after schema and integrity checks (`create_workflow`).
#[utoipa::path(post, path = "/api/workflows", tag = "workflows", params(ProjectQuery), request_body = CreateBody,
    responses((status = 201, body = Object), (status = 400, body = Object), (status = 409, body = Object)))]
pub(crate) async fn create(
    State(web): State<Web>,
    principal: Principal,
    Query(q): Query<ProjectQuery>,
    Json(body): Json<CreateBody>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let (actor, id) = (principal.actor(), body.id.clone());
    let written = {
        let (web, actor, scope) = (web.clone(), actor.clone(), ws.scope.clone());
        blocking(move || {
            let contents = Body::from_inputs(body.config, body.yaml)?;
            json(web.roscoe.create_workflow(&scope, &body.id, &contents, body.source.map(Into::into), &actor)?)
        })
        .await?
    };
    record(&web, &actor, "create_workflow", &ws, &id).await;
    approve_written(&web, &actor, &ws, &id, &written).await;
    Ok((StatusCode::CREATED, written))
}

/// Records that `actor` did `action` to workflow `id` (a failure to record is logged: the write happened).
async fn record(web: &Web, actor: &Actor, action: &str, ws: &Workspace, id: &str) {
    let subject = cairn_roscoe::runs::workflow_subject(&ws.scope, id);
    if let Err(error) = web.runs.record(actor, action, &subject, Value::Object(Default::default())).await {
        tracing::warn!("{action} of workflow '{id}' succeeded but could not be recorded: {error}");
    }
}

/// Approves the workflow file `actor` just wrote (its `path` in `written`) for the runs its triggers start.
async fn approve_written(web: &Web, actor: &Actor, ws: &Workspace, id: &str, written: &Json<Value>) {
    if let Some(path) = written.get("path").and_then(Value::as_str) {
        web.runs.approve_saved(&ws.scope, id, std::path::Path::new(path), actor).await;
    }
}

/// Replaces a workflow's contents after the same checks (`update_workflow`).
#[utoipa::path(put, path = "/api/workflows/{id}", tag = "workflows", params(("id" = String, Path), WorkflowQuery),
    request_body = UpdateBody, responses((status = 200, body = Object), (status = 400, body = Object)))]
pub(crate) async fn update(
    State(web): State<Web>,
    principal: Principal,
    Path(id): Path<String>,
    Query(q): Query<WorkflowQuery>,
    Json(body): Json<UpdateBody>,
) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let actor = principal.actor();
    let written = {
        let (web, actor, scope, id) = (web.clone(), actor.clone(), ws.scope.clone(), id.clone());
        blocking(move || {
            let contents = Body::from_inputs(body.config, body.yaml)?;
            json(web.roscoe.update_workflow(&scope, &id, &contents, q.source.map(Into::into), &actor)?)
        })
        .await?
    };
    record(&web, &actor, "update_workflow", &ws, &id).await;
    approve_written(&web, &actor, &ws, &id, &written).await;
    Ok(written)
}

/// Deletes a workflow (`confirm=true`; refused while referenced unless `force=true`).
#[utoipa::path(delete, path = "/api/workflows/{id}", tag = "workflows", params(("id" = String, Path), DeleteQuery),
    responses((status = 200, body = Object), (status = 409, body = Object)))]
pub(crate) async fn delete(
    State(web): State<Web>,
    principal: Principal,
    Path(id): Path<String>,
    Query(q): Query<DeleteQuery>,
) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let written = {
        let (web, scope, id) = (web.clone(), ws.scope.clone(), id.clone());
        blocking(move || json(web.roscoe.delete_workflow(&scope, &id, q.source.map(Into::into), q.confirm, q.force)?))
            .await?
    };
    record(&web, &principal.actor(), "delete_workflow", &ws, &id).await;
    Ok(written)
}

/// Moves a workflow between the repo and global sources (`move_workflow`).
#[utoipa::path(post, path = "/api/workflows/{id}/move", tag = "workflows",
    params(("id" = String, Path), ProjectQuery), request_body = MoveBody, responses((status = 200, body = Object)))]
pub(crate) async fn move_to(
    State(web): State<Web>,
    principal: Principal,
    Path(id): Path<String>,
    Query(q): Query<ProjectQuery>,
    Json(body): Json<MoveBody>,
) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let written = {
        let (web, scope, id) = (web.clone(), ws.scope.clone(), id.clone());
        blocking(move || json(web.roscoe.move_workflow(&scope, &id, body.to.into(), body.from.map(Into::into))?)).await?
    };
    record(&web, &principal.actor(), "move_workflow", &ws, &id).await;
    Ok(written)
}

/// Copies a workflow to a new id (`duplicate_workflow`).
#[utoipa::path(post, path = "/api/workflows/{id}/duplicate", tag = "workflows",
    params(("id" = String, Path), ProjectQuery), request_body = DuplicateBody, responses((status = 200, body = Object)))]
pub(crate) async fn duplicate(
    State(web): State<Web>,
    principal: Principal,
    Path(id): Path<String>,
    Query(q): Query<ProjectQuery>,
    Json(body): Json<DuplicateBody>,
) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let to_id = body.to_id.clone();
    let written = {
        let (web, scope) = (web.clone(), ws.scope.clone());
        blocking(move || {
            let (source, to_source) = (body.source.map(Into::into), body.to_source.map(Into::into));
            json(web.roscoe.duplicate_workflow(&scope, &id, source, &body.to_id, to_source)?)
        })
        .await?
    };
    record(&web, &principal.actor(), "duplicate_workflow", &ws, &to_id).await;
    Ok(written)
}

/// Renames a workflow, rewriting the subworkflow nodes that name it (`rename_workflow`).
#[utoipa::path(post, path = "/api/workflows/{id}/rename", tag = "workflows",
    params(("id" = String, Path), ProjectQuery), request_body = RenameBody, responses((status = 200, body = Object)))]
pub(crate) async fn rename(
    State(web): State<Web>,
    principal: Principal,
    Path(id): Path<String>,
    Query(q): Query<ProjectQuery>,
    Json(body): Json<RenameBody>,
) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    let new_id = body.new_id.clone();
    let written = {
        let (web, scope) = (web.clone(), ws.scope.clone());
        blocking(move || {
            let rewrite = body.rewrite_references.unwrap_or(true);
            json(web.roscoe.rename_workflow(&scope, &id, &body.new_id, body.source.map(Into::into), rewrite)?)
        })
        .await?
    };
    if written.0.get("rolledBack") != Some(&Value::Bool(true)) {
        record(&web, &principal.actor(), "rename_workflow", &ws, &new_id).await;
    }
    Ok(written)
}

fn subject(body: SubjectBody) -> Result<Subject, ApiError> {
    Ok(Subject::from_inputs(body.config, body.yaml, body.id, body.source.map(Into::into))?)
}

/// Schema and integrity check (`validate_workflow`).
#[utoipa::path(post, path = "/api/validate", tag = "workflows", params(ProjectQuery), request_body = SubjectBody,
    responses((status = 200, description = "`{ valid, code?, errors }`", body = Object)))]
pub(crate) async fn validate(
    State(web): State<Web>,
    Query(q): Query<ProjectQuery>,
    Json(body): Json<SubjectBody>,
) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    blocking(move || json(web.roscoe.validate_workflow(&ws.scope, &subject(body)?)?)).await
}

/// Lint findings (`lint_workflow`).
#[utoipa::path(post, path = "/api/lint", tag = "workflows", params(ProjectQuery), request_body = SubjectBody,
    responses((status = 200, description = "`{ errors, warnings }`", body = Object)))]
pub(crate) async fn lint(
    State(web): State<Web>,
    Query(q): Query<ProjectQuery>,
    Json(body): Json<SubjectBody>,
) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    blocking(move || json(web.roscoe.lint_workflow(&ws.scope, &subject(body)?)?)).await
}

/// Mermaid text plus nodes and edges (`get_workflow_diagram`).
#[utoipa::path(post, path = "/api/diagram", tag = "workflows", params(ProjectQuery), request_body = SubjectBody,
    responses((status = 200, description = "`{ mermaid, nodes, edges }`", body = Object)))]
pub(crate) async fn diagram(
    State(web): State<Web>,
    Query(q): Query<ProjectQuery>,
    Json(body): Json<SubjectBody>,
) -> Result<Json<Value>, ApiError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    blocking(move || json(web.roscoe.workflow_diagram(&ws.scope, &subject(body)?)?)).await
}
