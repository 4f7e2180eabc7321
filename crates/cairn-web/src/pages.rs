//! The web UI: server-rendered askama pages with htmx for live parts (`hx-sse:connect` on the run page, polling on
//! the work board). Every page works without JavaScript except the live updates. Routes are registered here, one
//! line each, grouped by area; each page is a handler, an askama struct and `templates/<area>/<page>.html`, and each
//! live fragment has its own `_fragment.html` that the full page includes.
//!
//! State-changing forms carry the CSRF token of [`crate::csrf`] and answer `303 See Other` back to the page. The work
//! pages act as whoever signed in with a work token (`signin.rs`).

mod docs;
mod editor;
mod home;
mod paging;
mod run_form;
mod run_log;
mod run_notifications;
mod runs;
mod sessions;
mod settings;
mod signin;
mod work;
mod work_item;
mod workflows;

use askama::Template;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use crate::access::Principal;
use crate::error::ApiError;
pub(crate) use crate::page_error::PageError;
use crate::state::Web;
use crate::workspace::{self, Project, Workspace};

/// Every page, form target and asset.
pub(crate) fn routes(web: Web) -> Router {
    Router::new()
        .route("/", get(home::page))
        .route("/assets/{name}", get(asset))
        .route("/workflows", get(workflows::list))
        .route("/workflows/new", get(editor::new).post(editor::create))
        .route("/workflows/check", post(editor::check_draft))
        .route("/workflows/{id}", get(workflows::page))
        .route("/workflows/{id}/edit", get(editor::edit).post(editor::save))
        .route("/workflows/{id}/start", post(workflows::start))
        .route("/workflows/{id}/schedules", post(workflows::schedules))
        .route("/runs", get(runs::list))
        .route("/runs/{id}", get(runs::page))
        .route("/runs/{id}/live", get(runs::live))
        .route("/runs/{id}/log/{node_run_id}", get(run_log::fragment))
        .route("/runs/{id}/resume", post(runs::resume))
        .route("/runs/{id}/cancel", post(runs::cancel))
        .route("/runs/{id}/retry", post(runs::retry))
        .route("/runs/{id}/budget", post(runs::budget))
        .route("/open/runs/{id}", get(runs::open))
        .route("/work", get(work::board))
        .route("/work/items/{id}", get(work_item::page))
        .route("/work/items/{id}/claim", post(work::claim))
        .route("/work/items/{id}/handoff", post(work_item::handoff))
        .route("/work/items/{id}/state", post(work_item::set_state))
        .route("/work/documents", get(work::documents))
        .route("/work/spaces/{space_id}/documents/{document_id}", get(work::document))
        .route("/signin", get(signin::page).post(signin::sign_in))
        .route("/signout", post(signin::sign_out))
        .route("/sessions", get(sessions::list))
        .route("/sessions/{id}", get(sessions::page))
        .route("/settings", get(settings::page))
        .route("/settings/tokens", post(settings::create))
        .route("/settings/tokens/{id}/revoke", post(settings::revoke))
        .route("/docs", get(docs::list))
        .route("/docs/{*slug}", get(docs::page))
        .with_state(web)
}

/// What the layout (`base.html`) shows: the workspace switcher and the CSRF token for forms.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// The `?project=` value of the current workspace.
    pub(crate) project: String,
    /// Its name.
    pub(crate) workspace_name: String,
    /// Every workspace, for the switcher.
    pub(crate) projects: Vec<Project>,
    /// The page's path, where the switcher sends the choice.
    pub(crate) path: String,
    /// The form token of this browser's sign-in.
    pub(crate) csrf: String,
    /// Whether `--project` gives a DeepWork sessions page.
    pub(crate) has_sessions: bool,
    /// Who the browser is signed in as (`Ada (person)`; the header offers to sign out), `None` when it is not.
    pub(crate) signed_in: Option<String>,
    /// Whether pages need a sign-in: only then does the header offer one.
    pub(crate) require_auth: bool,
}

impl Layout {
    /// The layout of the page `visit` asks for, in workspace `ws`.
    pub(crate) async fn new(web: &Web, visit: &Visit, ws: &Workspace) -> Result<Layout, PageError> {
        Ok(Layout {
            project: ws.key.clone(),
            workspace_name: ws.name.clone(),
            projects: workspace::projects(web).await?,
            path: visit.uri.path().to_owned(),
            csrf: web.csrf.token(&visit.headers),
            has_sessions: web.deepwork.is_some(),
            signed_in: visit.principal.as_ref().and_then(|p| p.signed_in_as()).map(str::to_owned),
            require_auth: web.require_auth,
        })
    }
}

/// One request for a page: its headers, its URI, and who asks (as the access gate found it; `None` on an open
/// page of a browser that has not signed in).
#[derive(Debug, Clone)]
pub(crate) struct Visit {
    /// The request's headers (the sign-in cookie, for CSRF).
    pub(crate) headers: HeaderMap,
    /// The request's URI.
    pub(crate) uri: Uri,
    /// Who asks.
    pub(crate) principal: Option<Principal>,
}

impl<S: Send + Sync> FromRequestParts<S> for Visit {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Visit, Self::Rejection> {
        Ok(Visit {
            headers: parts.headers.clone(),
            uri: parts.uri.clone(),
            principal: parts.extensions.get::<Principal>().cloned(),
        })
    }
}

impl Visit {
    /// The roscoe actor of a form: who is signed in (or the local person where no sign-in is needed).
    pub(crate) fn actor(&self) -> Result<cairn_roscoe::Actor, PageError> {
        self.principal.as_ref().map(Principal::actor).ok_or_else(|| {
            PageError(ApiError::roscoe(StatusCode::UNAUTHORIZED, "unauthenticated", "sign in at /signin first"))
        })
    }
}

/// `page` as an HTML response (500 if it cannot be rendered).
pub(crate) fn html<T: Template>(page: &T) -> Response {
    match page.render() {
        Ok(body) => ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response(),
        Err(error) => PageError::from(ApiError::roscoe(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("the page cannot be rendered: {error}"),
        ))
        .into_response(),
    }
}

/// `?project=`.
#[derive(Debug, Deserialize)]
pub(crate) struct ProjectParam {
    /// `global` or a project id.
    pub(crate) project: Option<String>,
}

/// A form that carries only the CSRF token (cancel, retry).
#[derive(Debug, Deserialize)]
pub(crate) struct CsrfForm {
    /// The form token.
    pub(crate) csrf: String,
}

/// Refuses a form whose token is not the one of the browser's sign-in (`403`).
pub(crate) fn check_csrf(web: &Web, headers: &HeaderMap, token: &str) -> Result<(), PageError> {
    if web.csrf.verify(headers, token) {
        return Ok(());
    }
    Err(PageError(ApiError::roscoe(
        StatusCode::FORBIDDEN,
        "csrf",
        "the form's security token is missing or stale (the server may have restarted); reload the page and try again",
    )))
}

/// The vendored htmx and CodeMirror files, the stylesheet and the run page's and editor's scripts.
async fn asset(axum::extract::Path(name): axum::extract::Path<String>) -> Response {
    let (body, kind): (&'static str, &'static str) = match name.as_str() {
        "htmx.min.js" => (include_str!("../assets/vendor/htmx.min.js"), "text/javascript"),
        "hx-sse.min.js" => (include_str!("../assets/vendor/hx-sse.min.js"), "text/javascript"),
        "run.js" => (include_str!("../assets/run.js"), "text/javascript"),
        "editor.js" => (include_str!("../assets/editor.js"), "text/javascript"),
        "codemirror.js" => (include_str!("../assets/vendor/codemirror.js"), "text/javascript"),
        "codemirror.css" => (include_str!("../assets/vendor/codemirror.css"), "text/css"),
        "style.css" => (include_str!("../assets/style.css"), "text/css"),
        _ => return (StatusCode::NOT_FOUND, "no such asset").into_response(),
    };
    ([(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, "max-age=3600")], body).into_response()
}
