//! The state every REST endpoint and page handler shares: the domain services (the same ones the MCP tools call),
//! the optional DeepWork project, the CSRF key and what `?project=` means when it is absent.

use std::path::PathBuf;

use cairn_deepwork::Deepwork;
use cairn_roscoe::Runs;
use tokio_util::sync::CancellationToken;

use crate::csrf::Csrf;

/// The DeepWork project `cairn serve --project DIR` serves at `/deepwork/mcp`.
#[derive(Debug, Clone)]
pub struct DeepworkProject {
    /// The DeepWork service (jobs, sessions, reviews).
    pub service: Deepwork,
    /// The project root, canonical.
    pub root: PathBuf,
}

/// Shared by every handler; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Web {
    /// Roscoe authoring and docs.
    pub(crate) roscoe: cairn_roscoe::Service,
    /// Roscoe runs.
    pub(crate) runs: Runs,
    /// Work items, spaces and documents.
    pub(crate) work: cairn_work::Service,
    /// The DeepWork project of `--project`, if any.
    pub(crate) deepwork: Option<DeepworkProject>,
    /// The projects `?project=` may name (the `--project` folders), besides `global`.
    pub(crate) reach: cairn_roscoe::Reach,
    /// Signs and checks form tokens.
    pub(crate) csrf: Csrf,
    /// Whether pages need a sign-in (a server reachable beyond loopback, or `--require-auth`); without it, a
    /// browser that has not signed in acts as the local person.
    pub(crate) require_auth: bool,
    /// Cancelled at shutdown, so live streams end and the server can stop.
    pub(crate) shutdown: CancellationToken,
}

/// Runs `work` (file-system or git work of the roscoe services) on the blocking pool.
pub(crate) async fn blocking<T, F>(work: F) -> Result<T, crate::error::ApiError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, crate::error::ApiError> + Send + 'static,
{
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|join| {
        Err(crate::error::ApiError::roscoe(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("the request's worker failed: {join}"),
        ))
    })
}
