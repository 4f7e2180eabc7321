//! Who may reach what: one access check in front of every route of `cairn serve`.
//!
//! [`RULES`] is the table of every route (method and path pattern), the credential it takes and the scopes it needs;
//! docs/security.md shows the same table, and a test keeps the two equal. The [`gate`] finds the rule of each
//! request and:
//! - **open** routes (`/healthz`, assets, sign-in, the OAuth metadata) pass without a credential, and so do
//!   **signed** ones (the webhooks), whose handler checks the request's signature instead;
//! - **API** routes (MCP endpoints, `/api/…`) take `Authorization: Bearer <token>`; **page** routes take the
//!   browser's sign-in cookie (never a bearer token, and the API never a cookie, so a page on another site cannot
//!   use either). Work's own endpoints (`/mcp`, `/api/work/…`, `/api/spaces/…`) always take a token, as they did
//!   before this gate existed;
//! - without a credential, a server that requires none (loopback only, no `--require-auth`) lets the request through
//!   as the local person, who holds every scope; one that requires credentials answers `401` with a
//!   `WWW-Authenticate` challenge naming the protected-resource metadata (API), or redirects to `/signin` (pages);
//! - a credential without the rule's scopes is `403 insufficient_scope`, naming the scopes missing;
//! - a request that matches no rule is `404`: a route added to the router but not to [`RULES`] is unreachable, never
//!   open.
//!
//! The request then carries its [`Principal`] (the [`Access`] every MCP surface reads, and the work [`Caller`] of a
//! token or sign-in), where MCP servers, REST handlers and pages find it. Tools of an MCP endpoint are filtered and
//! checked per tool by the surface's registry; scopes that depend on what is run (`roscoe:exec`) are checked by the
//! facade that runs it.

use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::{Json, Router};
use cairn_mcp::access::{Access, Denied, Scope};
use cairn_roscoe::Actor;
use cairn_work::Caller;
use serde_json::{Value, json};

/// The cookie that holds a browser's sign-in secret.
pub(crate) const SIGN_IN_COOKIE: &str = "cairn_session";

/// The credential a route takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// None: anyone may call it.
    Open,
    /// A browser page or form: the sign-in cookie, or the local person where no credential is required.
    Page,
    /// An API route: a bearer token, or the local person where no credential is required.
    Api,
    /// Work's endpoints: a bearer token, always.
    Token,
    /// A webhook: no token or sign-in, a signature of the request with a secret the server holds, which the handler
    /// checks.
    Signed,
}

/// One route and what it takes.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// `GET`, `POST`, `PUT`, `DELETE`, or `*` for every method (MCP endpoints).
    pub method: &'static str,
    /// The path, with `{name}` for one segment and `{*name}` (last) for one or more.
    pub path: &'static str,
    /// The credential it takes.
    pub door: Door,
    /// The scopes it needs (empty: any signed-in principal).
    pub needs: &'static [Scope],
}

use Door::{Api, Open, Page, Signed, Token};
use Scope::{Admin, DeepworkRead, MetricsRead, RoscoeRead, RoscoeRun, RoscoeWrite};

const READ: &[Scope] = &[RoscoeRead];
const WRITE: &[Scope] = &[RoscoeWrite];
const RUN: &[Scope] = &[RoscoeRun];
const WORK_READ: &[Scope] = &cairn_work::WORK_READ;
const WORK_WRITE: &[Scope] = &cairn_work::WORK_WRITE;
const ANYONE: &[Scope] = &[];

const fn rule(method: &'static str, path: &'static str, door: Door, needs: &'static [Scope]) -> Rule {
    Rule { method, path, door, needs }
}

/// Every route of `cairn serve`, in the order docs/security.md lists them.
pub const RULES: &[Rule] = &[
    rule("GET", "/healthz", Open, ANYONE),
    rule("GET", "/metrics", Api, &[MetricsRead]),
    rule("GET", "/assets/{name}", Open, ANYONE),
    rule("GET", "/.well-known/oauth-protected-resource", Open, ANYONE),
    rule("GET", "/.well-known/oauth-protected-resource/mcp", Open, ANYONE),
    rule("GET", "/.well-known/oauth-protected-resource/roscoe/mcp", Open, ANYONE),
    rule("GET", "/.well-known/oauth-protected-resource/deepwork/mcp", Open, ANYONE),
    rule("GET", "/signin", Open, ANYONE),
    rule("POST", "/signin", Open, ANYONE),
    rule("POST", "/signout", Open, ANYONE),
    // MCP endpoints: any principal may connect; `tools/list` shows it the tools its scopes allow, and each call is
    // checked against the tool's scopes (docs/security.md lists them).
    rule("*", "/roscoe/mcp", Api, ANYONE),
    rule("*", "/deepwork/mcp", Api, ANYONE),
    rule("*", "/mcp", Token, ANYONE),
    // Webhooks: the request's HMAC signature is the credential (checked by roscoe's run facade).
    rule("POST", "/hooks/roscoe/{project}/{workflow}", Signed, ANYONE),
    // REST: roscoe.
    rule("GET", "/api/openapi.json", Api, ANYONE),
    rule("GET", "/api/projects", Api, READ),
    rule("GET", "/api/workflows", Api, READ),
    rule("POST", "/api/workflows", Api, WRITE),
    rule("GET", "/api/workflows/{id}", Api, READ),
    rule("PUT", "/api/workflows/{id}", Api, WRITE),
    rule("DELETE", "/api/workflows/{id}", Api, WRITE),
    rule("POST", "/api/workflows/{id}/move", Api, WRITE),
    rule("POST", "/api/workflows/{id}/duplicate", Api, WRITE),
    rule("POST", "/api/workflows/{id}/rename", Api, WRITE),
    rule("POST", "/api/validate", Api, READ),
    rule("POST", "/api/lint", Api, READ),
    rule("POST", "/api/diagram", Api, READ),
    rule("GET", "/api/runs", Api, READ),
    rule("POST", "/api/runs", Api, RUN),
    rule("GET", "/api/runs/{id}", Api, READ),
    rule("GET", "/api/runs/{id}/events", Api, READ),
    rule("POST", "/api/runs/{id}/resume", Api, RUN),
    rule("POST", "/api/runs/{id}/cancel", Api, RUN),
    rule("POST", "/api/runs/{id}/retry", Api, RUN),
    rule("POST", "/api/runs/{id}/budget", Api, RUN),
    rule("GET", "/api/docs", Api, READ),
    rule("GET", "/api/docs/search", Api, READ),
    rule("GET", "/api/docs/{slug}", Api, READ),
    // REST: work.
    rule("GET", "/api/work/items", Token, WORK_READ),
    rule("POST", "/api/work/items", Token, WORK_WRITE),
    rule("PATCH", "/api/work/items/{id}", Token, WORK_WRITE),
    rule("GET", "/api/work/items/{id}", Token, WORK_READ),
    rule("POST", "/api/work/items/{id}/claim", Token, WORK_WRITE),
    rule("POST", "/api/work/items/{id}/heartbeat", Token, WORK_WRITE),
    rule("POST", "/api/work/items/{id}/handoff", Token, WORK_WRITE),
    rule("POST", "/api/work/evidence", Token, WORK_WRITE),
    rule("GET", "/api/spaces", Token, WORK_READ),
    rule("POST", "/api/spaces", Token, WORK_WRITE),
    rule("GET", "/api/spaces/{space_id}/ready", Token, WORK_READ),
    rule("POST", "/api/spaces/{space_id}/next", Token, WORK_WRITE),
    rule("GET", "/api/spaces/{space_id}/documents", Token, WORK_READ),
    rule("POST", "/api/spaces/{space_id}/documents", Token, WORK_WRITE),
    rule("GET", "/api/spaces/{space_id}/documents/{document_id}", Token, WORK_READ),
    rule("PUT", "/api/spaces/{space_id}/documents/{document_id}", Token, WORK_WRITE),
    rule("GET", "/api/spaces/{space_id}/documents/{document_id}/status", Token, WORK_READ),
    // Pages.
    rule("GET", "/", Page, ANYONE),
    rule("GET", "/workflows", Page, READ),
    rule("GET", "/workflows/new", Page, READ),
    rule("POST", "/workflows/new", Page, WRITE),
    rule("POST", "/workflows/check", Page, READ),
    rule("GET", "/workflows/{id}", Page, READ),
    rule("GET", "/workflows/{id}/edit", Page, READ),
    rule("POST", "/workflows/{id}/edit", Page, WRITE),
    rule("POST", "/workflows/{id}/start", Page, RUN),
    rule("POST", "/workflows/{id}/schedules", Page, WRITE),
    rule("GET", "/runs", Page, READ),
    rule("GET", "/runs/{id}", Page, READ),
    rule("GET", "/runs/{id}/live", Page, READ),
    rule("GET", "/runs/{id}/log/{node_run_id}", Page, READ),
    rule("POST", "/runs/{id}/resume", Page, RUN),
    rule("POST", "/runs/{id}/cancel", Page, RUN),
    rule("POST", "/runs/{id}/retry", Page, RUN),
    rule("POST", "/runs/{id}/budget", Page, RUN),
    rule("GET", "/open/runs/{id}", Page, READ),
    rule("GET", "/work", Page, WORK_READ),
    rule("GET", "/work/items/{id}", Page, WORK_READ),
    rule("POST", "/work/items/{id}/claim", Page, WORK_WRITE),
    rule("POST", "/work/items/{id}/handoff", Page, WORK_WRITE),
    rule("POST", "/work/items/{id}/state", Page, WORK_WRITE),
    rule("GET", "/work/documents", Page, WORK_READ),
    rule("GET", "/work/spaces/{space_id}/documents/{document_id}", Page, WORK_READ),
    rule("GET", "/sessions", Page, &[DeepworkRead]),
    rule("GET", "/sessions/{id}", Page, &[DeepworkRead]),
    rule("GET", "/docs", Page, ANYONE),
    rule("GET", "/docs/{*slug}", Page, ANYONE),
    rule("GET", "/settings", Page, ANYONE),
    rule("POST", "/settings/tokens", Page, &[Admin]),
    rule("POST", "/settings/tokens/{id}/revoke", Page, &[Admin]),
];

impl Rule {
    fn matches(&self, method: &Method, path: &str) -> bool {
        let method = if method == Method::HEAD { "GET" } else { method.as_str() };
        if self.method != "*" && self.method != method {
            return false;
        }
        let mut want = self.path.split('/');
        let mut got = path.split('/');
        loop {
            match (want.next(), got.next()) {
                (None, None) => return true,
                (Some(w), Some(g)) if w.starts_with("{*") && !g.is_empty() => return true,
                (Some(w), Some(g)) if w.starts_with('{') && !g.is_empty() => {}
                (Some(w), Some(g)) if w == g => {}
                _ => return false,
            }
        }
    }
}

/// The rule of a request: where two rules match, the one with more literal segments wins.
pub fn rule_for(method: &Method, path: &str) -> Option<&'static Rule> {
    RULES
        .iter()
        .filter(|r| r.matches(method, path))
        .max_by_key(|r| r.path.split('/').filter(|s| !s.starts_with('{')).count())
}

/// Who a request comes from, as the gate found it.
#[derive(Debug, Clone)]
pub(crate) struct Principal {
    /// What it may do, in every surface's terms.
    pub(crate) access: Access,
    /// Its work caller when it showed a token or a sign-in (`None` for the local person).
    pub(crate) caller: Option<Caller>,
}

impl Principal {
    /// The local person of a server that requires no credential.
    fn local() -> Principal {
        Principal { access: Access::local(), caller: None }
    }

    fn of(caller: Caller) -> Principal {
        Principal { access: caller.access(), caller: Some(caller) }
    }

    /// Its roscoe [`Actor`] for an action through the web UI or the REST API.
    pub(crate) fn actor(&self) -> Actor {
        Actor {
            via: "web",
            principal_id: self.access.principal_id.clone(),
            name: self.access.name.clone(),
            may_exec: self.access.holds(Scope::RoscoeExec),
        }
    }

    /// How the navigation names it: `Ada (person)`, or `None` for the local person of a server without sign-in.
    pub(crate) fn signed_in_as(&self) -> Option<&str> {
        self.caller.as_ref().map(|_| self.access.name.as_str())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Principal {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Principal, Response> {
        parts.extensions.get::<Principal>().cloned().ok_or_else(|| {
            (StatusCode::INTERNAL_SERVER_ERROR, "the access layer did not identify this request").into_response()
        })
    }
}

/// What the gate needs: the token store and whether credentials are required.
#[derive(Debug, Clone)]
pub(crate) struct Gate {
    /// Tokens and sign-ins.
    pub(crate) work: cairn_work::Service,
    /// Whether every non-open route needs a credential (a server reachable beyond loopback, or `--require-auth`).
    pub(crate) required: bool,
}

/// How a refusal is worded for the route's family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// An MCP endpoint: a JSON-RPC error body.
    Mcp,
    /// The roscoe REST API and `/metrics`: `{ error, code }`.
    Rest,
    /// Work's REST API: `{ error: { code, message, details } }`.
    WorkRest,
    /// A page: a redirect to sign in, or an HTML page.
    Page,
}

impl Family {
    /// The family of the route at `path`.
    pub(crate) fn of(path: &str) -> Family {
        if matches!(path, "/mcp" | "/roscoe/mcp" | "/deepwork/mcp") {
            Family::Mcp
        } else if path.starts_with("/api/work/") || path == "/api/work" || path.starts_with("/api/spaces") {
            Family::WorkRest
        } else if path.starts_with("/api/") || path == "/metrics" {
            Family::Rest
        } else {
            Family::Page
        }
    }
}

/// The access check in front of every route.
pub(crate) async fn gate(State(gate): State<Gate>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let Some(rule) = rule_for(request.method(), &path) else {
        return (StatusCode::NOT_FOUND, "no such page or endpoint").into_response();
    };
    let family = Family::of(&path);
    let principal = match identify(&gate, rule, request.headers()).await {
        Ok(principal) => principal,
        Err(Refusal::Unavailable(message)) => return (StatusCode::SERVICE_UNAVAILABLE, message).into_response(),
        Err(Refusal::Unauthenticated { invalid }) if rule.door != Open => {
            return unauthenticated(family, &path, request.uri().path_and_query().map(|p| p.as_str()), request.headers(), invalid);
        }
        Err(Refusal::Unauthenticated { .. }) => None,
    };
    if let Some(principal) = principal {
        tracing::Span::current().record("principal", principal.access.name.as_str());
        if let Err(denied) = principal.access.require(&format!("{} {}", rule.method.replace('*', "any method on"), rule.path), rule.needs) {
            return insufficient(family, &denied);
        }
        request.extensions_mut().insert(principal.access.clone());
        if let Some(caller) = &principal.caller {
            request.extensions_mut().insert(caller.clone());
        }
        request.extensions_mut().insert(principal);
    }
    next.run(request).await
}

/// Why a request has no principal.
enum Refusal {
    /// No credential where one is needed, or one that does not work (`invalid`).
    Unauthenticated { invalid: bool },
    /// The token store could not be asked.
    Unavailable(String),
}

/// The principal of a request under `rule`: `Ok(None)` for an open route without a sign-in.
async fn identify(gate: &Gate, rule: &Rule, headers: &HeaderMap) -> Result<Option<Principal>, Refusal> {
    let unavailable = |e: cairn_work::Error| Refusal::Unavailable(format!("the token store cannot be read: {e}"));
    match rule.door {
        Signed => Ok(None),
        Open | Page => {
            let secret = cookie(headers, SIGN_IN_COOKIE).filter(|s| !s.is_empty());
            let found = match &secret {
                Some(secret) => gate.work.signed_in(secret).await.map_err(unavailable)?,
                None => None,
            };
            match found {
                Some(caller) => Ok(Some(Principal::of(caller))),
                None if rule.door == Open => Ok(None),
                // A sign-in that ended is said so, never silently replaced by the local person.
                None if secret.is_some() => Err(Refusal::Unauthenticated { invalid: true }),
                None if !gate.required => Ok(Some(Principal::local())),
                None => Err(Refusal::Unauthenticated { invalid: false }),
            }
        }
        Api | Token => match bearer(headers) {
            Some(token) => match gate.work.authenticate(token).await.map_err(unavailable)? {
                Some(caller) => Ok(Some(Principal::of(caller))),
                None => Err(Refusal::Unauthenticated { invalid: true }),
            },
            None if rule.door == Api && !gate.required => Ok(Some(Principal::local())),
            None => Err(Refusal::Unauthenticated { invalid: false }),
        },
    }
}

/// The value of cookie `name` in `headers` (the first, where a browser sends several).
pub(crate) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
}

/// The token of `Authorization: Bearer <token>`.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then_some(token.trim())
}

/// `401` (or, for a page, a redirect to sign in) for a request without a working credential.
fn unauthenticated(family: Family, path: &str, target: Option<&str>, headers: &HeaderMap, invalid: bool) -> Response {
    let reason = if invalid {
        "the token is unknown, expired or revoked; ask for a new one (cairn work token create)"
    } else {
        "this endpoint needs Authorization: Bearer <token> (cairn work token create)"
    };
    let body = match family {
        Family::Page => {
            let next = percent_encode(target.unwrap_or("/"));
            if !invalid {
                return Redirect::to(&format!("/signin?next={next}")).into_response();
            }
            // The browser's sign-in ended (its token was revoked or expired): forget it and say so.
            let mut response = Redirect::to(&format!("/signin?ended=1&next={next}")).into_response();
            let cleared = format!("{SIGN_IN_COOKIE}=; {}", cookie_attributes(headers, 0));
            if let Ok(value) = HeaderValue::from_str(&cleared) {
                response.headers_mut().insert(header::SET_COOKIE, value);
            }
            return response;
        }
        Family::Mcp => json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": reason}}),
        Family::Rest => json!({"error": reason, "code": "unauthenticated"}),
        Family::WorkRest => json!({"error": {"code": "unauthenticated", "message": reason, "details": {}}}),
    };
    let metadata = if family == Family::Mcp { path } else { "" };
    let mut challenge = format!("Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource{metadata}\"", base_url(headers));
    if invalid {
        challenge.push_str(", error=\"invalid_token\"");
    }
    let mut response = (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// `403 insufficient_scope` naming what is missing.
fn insufficient(family: Family, denied: &Denied) -> Response {
    let missing = Scope::join(&denied.missing());
    let message = format!("{denied} (missing: {missing})");
    let body = match family {
        Family::Mcp => json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32003, "message": message,
            "data": {"code": "insufficient_scope", "missing": missing}}}),
        Family::Rest => json!({"error": message, "code": "insufficient_scope", "missing": missing}),
        Family::WorkRest => json!({"error": {"code": "insufficient_scope", "message": message,
            "details": {"missing": missing}}}),
        Family::Page => {
            let message = format!("{denied}; sign in at /signin with a token that has them");
            return crate::page_error::refusal_page(StatusCode::FORBIDDEN, "insufficient_scope", &message);
        }
    };
    let mut response = (StatusCode::FORBIDDEN, Json(body)).into_response();
    let challenge = format!("Bearer error=\"insufficient_scope\", scope=\"{}\"", missing.replace(", ", " "));
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// `text` with everything but unreserved characters and `/` percent-encoded (for `?next=`).
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `http://<Host>` of the request (the Host guard has already checked it).
fn base_url(headers: &HeaderMap) -> String {
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("localhost");
    let scheme = match headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok()) {
        Some("https") => "https",
        _ => "http",
    };
    format!("{scheme}://{host}")
}

/// The OAuth protected-resource metadata (RFC 9728) of each MCP endpoint and of the server as a whole.
pub(crate) fn metadata_routes() -> Router {
    let route = |resource: &'static str, name: &'static str, scopes: &'static [&'static str]| {
        get(move |headers: HeaderMap| async move { metadata(&headers, resource, name, scopes) })
    };
    Router::new()
        .route("/.well-known/oauth-protected-resource", route("", "cairn", &[]))
        .route("/.well-known/oauth-protected-resource/mcp", route("/mcp", "cairn work items and decisions", &["mcp:read", "mcp:write", "decisions:read", "decisions:write"]))
        .route("/.well-known/oauth-protected-resource/roscoe/mcp", route("/roscoe/mcp", "cairn roscoe workflows and runs", &["roscoe:read", "roscoe:write", "roscoe:run", "roscoe:exec"]))
        .route("/.well-known/oauth-protected-resource/deepwork/mcp", route("/deepwork/mcp", "cairn DeepWork jobs and reviews", &["deepwork:read", "deepwork:write"]))
}

fn metadata(headers: &HeaderMap, resource: &str, name: &str, scopes: &[&str]) -> Json<Value> {
    let scopes: Vec<&str> = if scopes.is_empty() { Scope::ALL.iter().map(|s| s.as_str()).collect() } else { scopes.to_vec() };
    Json(json!({
        "resource": format!("{}{resource}", base_url(headers)),
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": name,
    }))
}

/// The attributes of a cookie that lives `max_age` seconds: HttpOnly, SameSite=Strict, and `Secure` when the
/// request reached the server over HTTPS (a TLS-terminating proxy says so with `X-Forwarded-Proto: https`, or
/// `ROSCOE_PUBLIC_URL` names an `https://` address).
pub(crate) fn cookie_attributes(headers: &HeaderMap, max_age: i64) -> String {
    let forwarded = headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok()) == Some("https");
    let public = std::env::var("ROSCOE_PUBLIC_URL").is_ok_and(|u| u.starts_with("https://"));
    let secure = if forwarded || public { "; Secure" } else { "" };
    format!("Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_segments_win_and_unknown_routes_match_nothing() {
        let post = Method::POST;
        assert_eq!(rule_for(&post, "/api/workflows/abc/move").unwrap().path, "/api/workflows/{id}/move");
        assert_eq!(rule_for(&Method::GET, "/.well-known/oauth-protected-resource/mcp").unwrap().door, Open);
        assert_eq!(rule_for(&Method::GET, "/api/workflows/abc").unwrap().path, "/api/workflows/{id}");
        assert_eq!(rule_for(&Method::DELETE, "/roscoe/mcp").unwrap().path, "/roscoe/mcp");
        assert_eq!(rule_for(&Method::HEAD, "/runs/r1").unwrap().path, "/runs/{id}");
        assert!(rule_for(&Method::GET, "/nope").is_none());
        assert!(rule_for(&Method::GET, "/runs/").is_none());
        assert!(rule_for(&Method::DELETE, "/runs/r1").is_none());
        assert!(rule_for(&Method::GET, "/runs/r1/live/extra").is_none());
    }

    #[test]
    fn next_targets_are_encoded() {
        assert_eq!(percent_encode("/runs/a?project=global&x=1"), "/runs/a%3Fproject%3Dglobal%26x%3D1");
    }
}
