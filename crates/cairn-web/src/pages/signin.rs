//! Signing in to the web UI with a cairn token, and who the pages act as.
//!
//! `GET /signin` shows a form where a person pastes a token (the same `cairn_…` tokens the MCP endpoints and the
//! REST API accept, from `cairn work token create`). `POST /signin` checks it and records a sign-in on the server
//! (`Service::sign_in`); the browser gets only the sign-in's random secret, in the `cairn_session` cookie (HttpOnly,
//! SameSite=Strict, `Secure` when the page was reached over HTTPS), and goes back to the page that sent it here
//! (`next`, a path on this server). `POST /signout` ends the sign-in on the server and clears the cookie. Both forms
//! carry the CSRF token. A bad token leaves any earlier sign-in as it was.
//!
//! The access gate (`access.rs`) finds the principal of every page from that cookie, re-checked on every request
//! (a revoked or expired token stops working at once). [`work_caller`] is how the work pages and forms find their
//! work caller: the signed-in principal, held to its scopes, or the local person on a server that needs no sign-in.

use askama::Template;
use axum::Form;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use cairn_work::{Caller, Kind, SIGN_IN_TTL_MS, Scope};
use serde::Deserialize;

use super::{Layout, PageError, Visit, check_csrf, html};
use crate::access::{SIGN_IN_COOKIE, cookie, cookie_attributes};
use crate::error::ApiError;
use crate::state::Web;
use crate::workspace::Workspace;

#[derive(Template)]
#[template(path = "signin/page.html")]
struct SignInPage {
    layout: Layout,
    /// `Ada (person)` and the token's scopes, when the browser is signed in.
    signed_in: Option<(String, String)>,
    /// Why the last attempt failed.
    error: Option<String>,
    /// What the pages do without a sign-in.
    fallback: &'static str,
    /// Where to go after signing in.
    next: String,
}

/// `?next=` (and `?ended=1`) of the sign-in page.
#[derive(Debug, Deserialize)]
pub(crate) struct NextParam {
    /// The page that sent the browser here.
    next: Option<String>,
    /// Set when the browser was sent here because its sign-in had ended.
    ended: Option<String>,
}

/// The sign-in form.
#[derive(Debug, Deserialize)]
pub(crate) struct SignInForm {
    /// The form token.
    csrf: String,
    /// The pasted bearer token.
    #[serde(default)]
    token: String,
    /// Where to go afterwards.
    #[serde(default)]
    next: String,
}

/// The caller of a work page or form that needs `needed` (named after the work tool it stands for, `tool`).
pub(crate) async fn work_caller(web: &Web, visit: &Visit, tool: &str, needed: &[Scope]) -> Result<Caller, PageError> {
    let caller = match visit.principal.as_ref().and_then(|p| p.caller.clone()) {
        Some(caller) => caller,
        None if !web.require_auth => web.work.local_caller(Kind::Person).await?,
        None => {
            return Err(refusal(
                StatusCode::UNAUTHORIZED,
                "unauthenticated",
                "this server needs a sign-in: paste a token (cairn work token create) at /signin",
            ));
        }
    };
    caller.require(tool, needed).map_err(|error| {
        refusal(StatusCode::FORBIDDEN, "insufficient_scope", &format!("{error}; sign in with a token that has them at /signin"))
    })?;
    Ok(caller)
}

fn refusal(status: StatusCode, code: &str, message: &str) -> PageError {
    PageError(ApiError::roscoe(status, code, message))
}

/// What the pages do when nobody is signed in.
fn fallback(web: &Web) -> &'static str {
    if web.require_auth {
        "This server needs a sign-in for every page."
    } else {
        "Without a sign-in, the pages act as the local person (this server answers loopback names only)."
    }
}

/// Who the browser is signed in as, for the page.
fn current(visit: &Visit) -> Option<(String, String)> {
    let caller = visit.principal.as_ref()?.caller.as_ref()?;
    Some((caller.label(), Scope::join(&caller.scopes)))
}

/// A path on this server to go back to (`/` for anything else, so the form cannot send anyone elsewhere): one `/`
/// then printable ASCII other than `\`. Browsers drop tabs and newlines from a `Location` and read `\` as `/`, so
/// `/<tab>/other.host` or `/\other.host` would be `//other.host`, another site; spaces and anything else outside
/// printable ASCII have no place in a path this server makes either.
fn local_path(next: &str) -> &str {
    let printable = next.bytes().all(|b| b.is_ascii_graphic() && b != b'\\');
    let ok = printable && next.starts_with('/') && !next[1..].starts_with('/') && !next.contains("://");
    if ok { next } else { "/" }
}

/// `GET /signin`.
pub(crate) async fn page(
    State(web): State<Web>,
    visit: Visit,
    Query(q): Query<NextParam>,
) -> Result<Response, PageError> {
    let signed_in = current(&visit);
    let stale = cookie(&visit.headers, SIGN_IN_COOKIE).is_some_and(|v| !v.is_empty()) && signed_in.is_none();
    let ended = stale || q.ended.is_some();
    let error = ended.then(|| "this browser's sign-in has ended (its token was revoked or expired); sign in again".to_owned());
    let layout = Layout::new(&web, &visit, &Workspace::global()).await?;
    let next = local_path(q.next.as_deref().unwrap_or("/")).to_owned();
    let page = SignInPage { layout: layout.clone(), signed_in, error, fallback: fallback(&web), next };
    Ok(html(&page))
}

/// `POST /signin`: a valid token becomes a sign-in of this browser; anything else shows the form again with the
/// reason.
pub(crate) async fn sign_in(State(web): State<Web>, visit: Visit, Form(form): Form<SignInForm>) -> Result<Response, PageError> {
    check_csrf(&web, &visit.headers, &form.csrf)?;
    let token = form.token.trim();
    let token = token.strip_prefix("Bearer ").unwrap_or(token).trim();
    let next = local_path(&form.next).to_owned();
    let (status, error) = if token.is_empty() {
        (StatusCode::BAD_REQUEST, "paste a token (cairn work token create prints one) into the field")
    } else if let Some(signed) = web.work.sign_in(token).await? {
        let mut response = Redirect::to(&next).into_response();
        let attributes = cookie_attributes(&visit.headers, SIGN_IN_TTL_MS / 1000);
        // The secret is base64url: nothing a cookie value cannot hold.
        let value = HeaderValue::from_str(&format!("{SIGN_IN_COOKIE}={}; {attributes}", signed.secret))
            .map_err(|_| refusal(StatusCode::INTERNAL_SERVER_ERROR, "internal", "the sign-in cookie cannot be written"))?;
        response.headers_mut().insert(header::SET_COOKIE, value);
        return Ok(response);
    } else {
        (StatusCode::UNAUTHORIZED, "this token is unknown, expired or revoked; nothing changed — check that it was copied whole")
    };
    let layout = Layout::new(&web, &visit, &Workspace::global()).await?;
    let page = SignInPage { layout: layout.clone(), signed_in: current(&visit), error: Some(error.to_owned()), fallback: fallback(&web), next };
    Ok((status, html(&page)).into_response())
}

/// `POST /signout`: ends the browser's sign-in on the server and forgets its cookie.
pub(crate) async fn sign_out(
    State(web): State<Web>,
    visit: Visit,
    Form(form): Form<super::CsrfForm>,
) -> Result<Response, PageError> {
    check_csrf(&web, &visit.headers, &form.csrf)?;
    if let Some(secret) = cookie(&visit.headers, SIGN_IN_COOKIE).filter(|v| !v.is_empty()) {
        web.work.sign_out(&secret).await?;
    }
    let mut response = Redirect::to("/signin").into_response();
    let expired = format!("{SIGN_IN_COOKIE}=; {}", cookie_attributes(&visit.headers, 0));
    response.headers_mut().insert(header::SET_COOKIE, HeaderValue::from_str(&expired).expect("a valid header"));
    Ok(response)
}
