//! `?project=`: which workspace a request is about — `global`, or a project id (16 hex chars, as run URLs carry
//! it) looked up among the projects runs were started in (the run facade's `known_projects`). Without the
//! parameter it is the `--project` of `cairn serve` when one was given, else Global.

use axum::http::StatusCode;
use cairn_roscoe::Scope;
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::state::Web;

/// A resolved workspace.
#[derive(Debug, Clone)]
pub(crate) struct Workspace {
    /// What the roscoe services are called with.
    pub(crate) scope: Scope,
    /// `global` or the project id: the `?project=` value that names it.
    pub(crate) key: String,
    /// For people: the folder name, or `Global`.
    pub(crate) name: String,
}

/// One entry of `GET /api/projects` (and of the workspace switcher).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Project {
    /// The `?project=` value: 16 hex chars, or `global`.
    pub(crate) id: String,
    /// The folder name, or `Global`.
    pub(crate) name: String,
    /// The project root; `null` for Global.
    pub(crate) root_path: Option<String>,
    /// When a run last started there (epoch ms); `null` for Global.
    pub(crate) last_seen_at: Option<i64>,
    /// Its top-level runs.
    pub(crate) run_count: i64,
}

impl Workspace {
    /// The Global workspace.
    pub(crate) fn global() -> Workspace {
        Workspace { scope: Scope::Global, key: "global".into(), name: "Global".into() }
    }

    /// The workspace `project` names (see the module doc).
    pub(crate) async fn resolve(web: &Web, project: Option<&str>) -> Result<Workspace, ApiError> {
        let project = project.map(str::trim).unwrap_or_default();
        match project {
            "" => match &web.deepwork {
                Some(dw) => from_root(&dw.root.to_string_lossy()).await,
                None => Ok(Workspace::global()),
            },
            "global" => Ok(Workspace::global()),
            id if id.len() == 16 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) => {
                if let Some(dw) = &web.deepwork
                    && cairn_roscoe::scope::project_id(&dw.root) == id
                {
                    return from_root(&dw.root.to_string_lossy()).await;
                }
                match web.runs.known_project(id).await? {
                    Some(row) => from_root(&row.root_path).await,
                    None => Err(ApiError::roscoe(
                        StatusCode::NOT_FOUND,
                        "not_found",
                        format!("no project '{id}'; GET /api/projects lists the known projects (or use `global`)"),
                    )),
                }
            }
            other => Err(ApiError::roscoe(
                StatusCode::BAD_REQUEST,
                "invalid_input",
                format!("project '{other}' is neither `global` nor a project id (16 hex chars)"),
            )),
        }
    }
}

/// The project workspace of `root` (resolving it runs git, so off the async threads).
async fn from_root(root: &str) -> Result<Workspace, ApiError> {
    let root = root.to_owned();
    let scope = crate::state::blocking(move || Scope::project(&root).map_err(ApiError::from)).await?;
    let key = scope.project_id().to_owned();
    let name = scope
        .root()
        .and_then(|r| r.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| key.clone());
    Ok(Workspace { scope, key, name })
}

/// Every workspace: Global first, then the known projects (and the `--project` one), most recent first.
pub(crate) async fn projects(web: &Web) -> Result<Vec<Project>, ApiError> {
    let mut found = vec![Project {
        id: "global".into(),
        name: "Global".into(),
        root_path: None,
        last_seen_at: None,
        run_count: web.runs.global_run_count().await?,
    }];
    for row in web.runs.known_projects().await? {
        found.push(Project {
            id: row.id,
            name: row.name,
            root_path: Some(row.root_path),
            last_seen_at: Some(row.last_seen_at),
            run_count: row.run_count,
        });
    }
    if let Some(dw) = &web.deepwork {
        let id = cairn_roscoe::scope::project_id(&dw.root);
        if !found.iter().any(|p| p.id == id) {
            found.push(Project {
                name: dw.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| id.clone()),
                id,
                root_path: Some(dw.root.to_string_lossy().into_owned()),
                last_seen_at: None,
                run_count: 0,
            });
        }
    }
    Ok(found)
}
