//! [`RunForm`]: what every form posted to `/runs/{id}/...` (resume, budget, cancel, retry) starts with — the form
//! read, its CSRF token checked and the `?project=` workspace resolved — as one axum extractor, and the redirect
//! back to the run page its handler answers with.

use axum::extract::{Form, FromRequest, FromRequestParts, Path, Query, Request};
use axum::response::{IntoResponse, Redirect, Response};
use serde::de::DeserializeOwned;

use super::{CsrfForm, PageError, ProjectParam, Visit, check_csrf};
use crate::state::Web;
use crate::workspace::Workspace;

/// A form that carries the CSRF token in its `csrf` field.
pub(crate) trait CsrfToken {
    /// The form's token.
    fn csrf(&self) -> &str;
}

impl CsrfToken for CsrfForm {
    fn csrf(&self) -> &str {
        &self.csrf
    }
}

/// A form posted to `/runs/{id}/...?project=`, its token checked: the run id, its workspace, the visit (for the
/// actor) and the form's fields.
pub(crate) struct RunForm<F = CsrfForm> {
    /// The `{id}` of the path.
    pub(crate) id: String,
    /// The workspace `?project=` names.
    pub(crate) ws: Workspace,
    /// The request.
    pub(crate) visit: Visit,
    /// The form's fields.
    pub(crate) form: F,
}

impl<F: CsrfToken + DeserializeOwned + Send> FromRequest<Web> for RunForm<F> {
    type Rejection = Response;

    async fn from_request(request: Request, web: &Web) -> Result<RunForm<F>, Response> {
        let (mut parts, body) = request.into_parts();
        let Ok(visit) = Visit::from_request_parts(&mut parts, web).await;
        let Path(id) = Path::<String>::from_request_parts(&mut parts, web).await.map_err(IntoResponse::into_response)?;
        let Query(q) =
            Query::<ProjectParam>::from_request_parts(&mut parts, web).await.map_err(IntoResponse::into_response)?;
        let Form(form) =
            Form::<F>::from_request(Request::from_parts(parts, body), web).await.map_err(IntoResponse::into_response)?;
        check_csrf(web, &visit.headers, form.csrf()).map_err(IntoResponse::into_response)?;
        let ws = Workspace::resolve(web, q.project.as_deref()).await.map_err(|e| PageError(e).into_response())?;
        Ok(RunForm { id, ws, visit, form })
    }
}

impl<F> RunForm<F> {
    /// The roscoe actor of the form (see [`Visit::actor`]).
    pub(crate) fn actor(&self) -> Result<cairn_roscoe::Actor, PageError> {
        self.visit.actor()
    }

    /// The run's page, where the form goes back to.
    pub(crate) fn back(&self) -> Result<Redirect, PageError> {
        back(&self.id, &self.ws)
    }
}

/// The run page of `id` (run ids are lower-case alphanumeric; anything else cannot be a run).
pub(crate) fn back(id: &str, ws: &Workspace) -> Result<Redirect, PageError> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(cairn_roscoe::Error::run_not_found().into());
    }
    Ok(Redirect::to(&format!("/runs/{id}?project={}", ws.key)))
}
