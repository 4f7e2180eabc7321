//! Signing in to the work pages with a work bearer token, and who those pages act as.
//!
//! `GET /signin` shows a form where a person pastes a token (the same `cairn_…` tokens `/mcp` and `/api/work`
//! accept, from `cairn work token create`). `POST /signin` checks it against the database and, when it is valid,
//! sets the `cairn_work_token` cookie holding it (HttpOnly, SameSite=Strict, for this browser session);
//! `POST /signout` clears it. Both forms carry the CSRF token. A bad token leaves any earlier sign-in as it was.
//!
//! [`work_caller`] is how every work page and form finds its caller: the signed-in token's principal, checked
//! again on every request (a revoked or expired token stops working at once) and held to the token's scopes; with
//! no cookie, the local person on a loopback-only server (as before sign-in existed), else a refusal that says to
//! sign in. Missing scopes and dead tokens are refused with a page that says what to do, never a 500.

use askama::Template;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use cairn_work::{Caller, Kind, Scope};
use serde::Deserialize;

use super::{Layout, PageError, check_csrf, render};
use crate::csrf::cookie;
use crate::error::ApiError;
use crate::state::Web;
use crate::workspace::Workspace;

/// The cookie that holds the signed-in token.
pub(crate) const COOKIE: &str = "cairn_work_token";

#[derive(Template)]
#[template(path = "signin/page.html")]
struct SignInPage {
    layout: Layout,
    /// `Ada (person)` and the token's scopes, when a valid token is signed in.
    signed_in: Option<(String, String)>,
    /// Why the last attempt failed.
    error: Option<String>,
    /// What the work pages do without a sign-in.
    fallback: &'static str,
}

/// The sign-in form.
#[derive(Debug, Deserialize)]
pub(crate) struct SignInForm {
    /// The form token.
    csrf: String,
    /// The pasted bearer token.
    #[serde(default)]
    token: String,
}

/// The caller of a work page or form that needs `needed` (named after the work tool it stands for, `tool`).
pub(crate) async fn work_caller(web: &Web, headers: &HeaderMap, tool: &str, needed: &[Scope]) -> Result<Caller, PageError> {
    let caller = match signed_in_token(headers) {
        Some(token) => web.work.authenticate(&token).await?.ok_or_else(|| {
            refusal(
                StatusCode::UNAUTHORIZED,
                "unauthenticated",
                "the token this browser signed in with is unknown, expired or revoked; sign in again at /signin (or \
                 sign out there)",
            )
        })?,
        None if web.loopback_only => web.work.local_caller(Kind::Person).await?,
        None => {
            return Err(refusal(
                StatusCode::UNAUTHORIZED,
                "unauthenticated",
                "this server answers other host names too, so its work pages need a sign-in: paste a work token \
                 (cairn work token create) at /signin",
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

/// What the work pages do when nobody is signed in.
fn fallback(web: &Web) -> &'static str {
    if web.loopback_only {
        "Without a sign-in, the work pages act as the local person (this server answers loopback names only)."
    } else {
        "This server answers other host names too: the work pages need a sign-in."
    }
}

/// Who the browser is signed in as (`Ada (person)` and the token's scopes), if its token still works.
async fn current(web: &Web, headers: &HeaderMap) -> Result<Option<(String, String)>, PageError> {
    Ok(match signed_in_token(headers) {
        Some(token) => web.work.authenticate(&token).await?.map(|c| (c.label(), Scope::join(&c.scopes))),
        None => None,
    })
}

/// `GET /signin`.
pub(crate) async fn page(State(web): State<Web>, headers: HeaderMap, uri: Uri) -> Result<Response, PageError> {
    let signed_in = current(&web, &headers).await?;
    let error = (signed_in_token(&headers).is_some() && signed_in.is_none())
        .then(|| "the token this browser signed in with is unknown, expired or revoked; sign in again".to_owned());
    let layout = Layout::new(&web, &headers, &uri, &Workspace::global()).await?;
    let page = SignInPage { layout: layout.clone(), signed_in, error, fallback: fallback(&web) };
    Ok(render(&layout, &page))
}

/// `POST /signin`: a valid token becomes the browser's sign-in; anything else shows the form again with the reason.
pub(crate) async fn sign_in(
    State(web): State<Web>,
    headers: HeaderMap,
    uri: Uri,
    Form(form): Form<SignInForm>,
) -> Result<Response, PageError> {
    check_csrf(&web, &headers, &form.csrf)?;
    let token = form.token.trim();
    let token = token.strip_prefix("Bearer ").unwrap_or(token).trim();
    let (status, error) = if token.is_empty() {
        (StatusCode::BAD_REQUEST, "paste a work token (cairn work token create prints one) into the field")
    } else if web.work.authenticate(token).await?.is_some() {
        let mut response = Redirect::to("/work").into_response();
        // Our tokens are `cairn_` + letters, digits, `_` and `-`: nothing a cookie value cannot hold.
        let value = HeaderValue::from_str(&format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"))
            .map_err(|_| refusal(StatusCode::BAD_REQUEST, "invalid_argument", "the token holds characters no token has"))?;
        response.headers_mut().insert(header::SET_COOKIE, value);
        return Ok(response);
    } else {
        (StatusCode::UNAUTHORIZED, "this token is unknown, expired or revoked; nothing changed — check that it was copied whole")
    };
    let signed_in = current(&web, &headers).await?;
    let layout = Layout::new(&web, &headers, &uri, &Workspace::global()).await?;
    let page = SignInPage { layout: layout.clone(), signed_in, error: Some(error.to_owned()), fallback: fallback(&web) };
    Ok((status, render(&layout, &page)).into_response())
}

/// `POST /signout`: forgets the browser's sign-in.
pub(crate) async fn sign_out(
    State(web): State<Web>,
    headers: HeaderMap,
    Form(form): Form<super::CsrfForm>,
) -> Result<Response, PageError> {
    check_csrf(&web, &headers, &form.csrf)?;
    let mut response = Redirect::to("/signin").into_response();
    let expired = format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
    response.headers_mut().insert(header::SET_COOKIE, HeaderValue::from_str(&expired).expect("a valid header"));
    Ok(response)
}

/// The token the browser signed in with (checked or not).
pub(crate) fn signed_in_token(headers: &HeaderMap) -> Option<String> {
    cookie(headers, COOKIE).filter(|v| !v.is_empty())
}
