//! `?project=`: which workspace a request is about — `global`, or a project id (16 hex chars, as run URLs carry
//! it) of one of the projects `cairn serve` serves (its `--project` folders). A project runs were started in
//! elsewhere (from the command line, say) is not served: its id is `not_found`, like an id nobody knows. Without the
//! parameter it is the first `--project` when one was given, else Global.

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
            "" => match web.reach.roots().first() {
                Some(root) => from_root(&root.to_string_lossy()).await,
                None => Ok(Workspace::global()),
            },
            "global" => Ok(Workspace::global()),
            id if id.len() == 16 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) => {
                match web.reach.roots().iter().find(|root| cairn_roscoe::scope::project_id(root) == id) {
                    Some(root) => from_root(&root.to_string_lossy()).await,
                    None => Err(ApiError::roscoe(
                        StatusCode::NOT_FOUND,
                        "not_found",
                        format!(
                            "no project '{id}' is served here; GET /api/projects lists the projects this server serves \
                             (cairn serve --project DIR serves another), or use `global`"
                        ),
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

/// Every workspace: Global first, then the served projects, those where a run started most recently first.
pub(crate) async fn projects(web: &Web) -> Result<Vec<Project>, ApiError> {
    let mut found = vec![Project {
        id: "global".into(),
        name: "Global".into(),
        root_path: None,
        last_seen_at: None,
        run_count: web.runs.global_run_count().await?,
    }];
    let known = web.runs.known_projects().await?;
    let mut served: Vec<Project> = web
        .reach
        .roots()
        .iter()
        .map(|root| {
            let id = cairn_roscoe::scope::project_id(root);
            let row = known.iter().find(|row| row.id == id);
            Project {
                name: root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| id.clone()),
                root_path: Some(root.to_string_lossy().into_owned()),
                last_seen_at: row.map(|row| row.last_seen_at),
                run_count: row.map_or(0, |row| row.run_count),
                id,
            }
        })
        .collect();
    served.sort_by_key(|p| std::cmp::Reverse(p.last_seen_at));
    found.extend(served);
    Ok(found)
}
