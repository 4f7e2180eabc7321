//! `/api/docs…` and `/api/projects`: the roscoe docs corpus (`list_docs`, `get_doc`, `search_docs`) and the
//! workspaces a request may name with `?project=`.

use axum::Json;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;

use crate::error::ApiError;
use crate::state::Web;
use crate::workspace::{self, Project};

/// `?q=&limit=`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct SearchQuery {
    /// Keywords, a tool name or an error code.
    q: String,
    /// 1–50, default 10.
    limit: Option<usize>,
}

/// Global and every known project, with run counts.
#[utoipa::path(get, path = "/api/projects", tag = "projects",
    responses((status = 200, body = Vec<Project>)))]
pub(crate) async fn projects(State(web): State<Web>) -> Result<Json<Vec<Project>>, ApiError> {
    Ok(Json(workspace::projects(&web).await?))
}

/// Every docs page (`list_docs`).
#[utoipa::path(get, path = "/api/docs", tag = "docs",
    responses((status = 200, description = "`[{ slug, title, description }]`", body = Object)))]
pub(crate) async fn list(State(web): State<Web>) -> Json<Value> {
    Json(serde_json::to_value(web.roscoe.list_docs()).unwrap_or(Value::Null))
}

/// Sections matching a query, best first (`search_docs`).
#[utoipa::path(get, path = "/api/docs/search", tag = "docs", params(SearchQuery),
    responses((status = 200, description = "`[{ slug, title, headingId, headingText, snippet, score }]`", body = Object),
        (status = 400, body = Object)))]
pub(crate) async fn search(State(web): State<Web>, Query(q): Query<SearchQuery>) -> Result<Json<Value>, ApiError> {
    let hits = web.roscoe.search_docs(&q.q, q.limit)?;
    Ok(Json(serde_json::to_value(hits).unwrap_or(Value::Null)))
}

/// One page's front matter and markdown (`get_doc`).
#[utoipa::path(get, path = "/api/docs/{slug}", tag = "docs", params(("slug" = String, Path)),
    responses((status = 200, description = "`{ frontmatter, markdown }`", body = Object), (status = 404, body = Object)))]
pub(crate) async fn get(State(web): State<Web>, Path(slug): Path<String>) -> Result<Json<Value>, ApiError> {
    let doc = web.roscoe.get_doc(&slug)?;
    Ok(Json(serde_json::to_value(doc).unwrap_or(Value::Null)))
}
