//! `/settings`: the effective `roscoe.yaml` of the workspace (models and prices, and the file each comes from), the
//! server's endpoints and version, and for the owners of work accounts signed in with the `admin` scope their accounts'
//! tokens — list, create (the secret shown once, in the answer to the form, never in a URL; scopes no wider than the
//! visitor's) and revoke — through `cairn_work::Service`.

use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Redirect, Response};
use cairn_roscoe::Settings;
use cairn_work::{NewToken, OwnedAccount};
use serde::Deserialize;

use super::signin::work_caller;
use super::{Layout, PageError, ProjectParam, check_csrf, html, Visit};
use crate::state::Web;
use crate::when::{Moment, usd};
use crate::workspace::Workspace;

/// A token row as the page shows it.
struct TokenRow {
    id: String,
    principal: String,
    kind: String,
    scopes: String,
    created: Moment,
    last_used: Moment,
    expires: String,
    revoked: bool,
}

/// An owned account with its tokens.
struct AccountView {
    id: String,
    name: String,
    tokens: Vec<TokenRow>,
}

#[derive(Template)]
#[template(path = "settings.html")]
struct SettingsPage {
    layout: Layout,
    settings: Settings,
    /// `(model, input price, output price)`, formatted: what runs are charged.
    prices: Vec<(String, String, String)>,
    /// Where the prices come from.
    pricing_from: String,
    version: &'static str,
    /// `(what, URL)`.
    endpoints: Vec<(&'static str, String)>,
    /// The accounts the visitor owns; `None` when the visitor has no work principal.
    accounts: Option<Vec<AccountView>>,
    /// Whether the visitor's credential holds `admin`, without which it manages no tokens; its scopes, to say so.
    token_admin: bool,
    scopes: String,
    /// A token just made, shown this once.
    created: Option<NewToken>,
}

fn account_view(account: OwnedAccount) -> AccountView {
    let tokens = account
        .tokens
        .into_iter()
        .map(|t| TokenRow {
            created: Moment::of(&t.created_at),
            last_used: Moment::of(&t.last_used_at),
            revoked: !t.revoked_at.is_empty(),
            expires: t.expires_at,
            id: t.grant.token_id,
            principal: t.grant.principal,
            kind: t.grant.kind,
            scopes: t.grant.scopes.join(" "),
        })
        .collect();
    AccountView { id: account.id, name: account.name, tokens }
}

/// The page, with `created` shown once when a token was just made.
async fn show(web: &Web, visit: &Visit, project: Option<&str>, created: Option<NewToken>) -> Result<Response, PageError> {
    let ws = Workspace::resolve(web, project).await?;
    let layout = Layout::new(web, visit, &ws).await?;
    let (roscoe, runs, scope) = (web.roscoe.clone(), web.runs.clone(), ws.scope.clone());
    let (settings, (pricing, pricing_from)) =
        crate::state::blocking(move || Ok((roscoe.settings(&scope), runs.prices(&scope)))).await?;
    let prices = pricing.iter().map(|(model, price)| (model.clone(), usd(price.input), usd(price.output))).collect();
    let host = visit.headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1:7777");
    let base = format!("http://{host}");
    let mut endpoints = vec![
        ("Web UI", format!("{base}/")),
        ("roscoe MCP", format!("{base}/roscoe/mcp")),
        ("work MCP (bearer tokens)", format!("{base}/mcp")),
        ("REST API", format!("{base}/api")),
        ("OpenAPI document", format!("{base}/api/openapi.json")),
        ("Health", format!("{base}/healthz")),
    ];
    if web.deepwork.is_some() {
        endpoints.insert(2, ("deepwork MCP", format!("{base}/deepwork/mcp")));
    }
    let (accounts, token_admin, scopes) = match work_caller(web, visit, "settings", &[]).await {
        Ok(caller) => (
            Some(web.work.owned_accounts(&caller).await?.into_iter().map(account_view).collect()),
            caller.holds(cairn_work::Scope::Admin),
            caller.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" "),
        ),
        Err(_) => (None, false, String::new()),
    };
    let page = SettingsPage {
        layout: layout.clone(),
        settings,
        prices,
        pricing_from,
        version: env!("CARGO_PKG_VERSION"),
        endpoints,
        accounts,
        token_admin,
        scopes,
        created,
    };
    Ok(html(&page))
}

/// `GET /settings?project=`.
pub(crate) async fn page(State(web): State<Web>, visit: Visit, Query(q): Query<ProjectParam>) -> Result<Response, PageError> {
    show(&web, &visit, q.project.as_deref(), None).await
}

/// The new-token form.
#[derive(Debug, Deserialize)]
pub(crate) struct CreateForm {
    csrf: String,
    #[serde(default)]
    account_id: String,
    #[serde(default)]
    principal: String,
    #[serde(default)]
    kind: String,
    /// Scopes, separated by commas or spaces.
    #[serde(default)]
    scopes: String,
}

/// `POST /settings/tokens`: a new token in an account the visitor owns; the answer shows its secret once.
pub(crate) async fn create(State(web): State<Web>, visit: Visit, Form(form): Form<CreateForm>) -> Result<Response, PageError> {
    check_csrf(&web, &visit.headers, &form.csrf)?;
    let caller = work_caller(&web, &visit, "settings", &[]).await?;
    let scopes: Vec<String> = form.scopes.split([',', ' ']).filter(|s| !s.is_empty()).map(str::to_owned).collect();
    let made = web.work.create_token_as_owner(&caller, &form.account_id, &form.principal, &form.kind, &scopes).await?;
    let mut response = show(&web, &visit, None, Some(made)).await?;
    response.headers_mut().insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
    Ok(response)
}

/// The revoke form.
#[derive(Debug, Deserialize)]
pub(crate) struct RevokeForm {
    csrf: String,
}

/// `POST /settings/tokens/{id}/revoke`: revokes a token of an account the visitor owns.
pub(crate) async fn revoke(
    State(web): State<Web>,
    visit: Visit,
    Path(id): Path<String>,
    Form(form): Form<RevokeForm>,
) -> Result<Response, PageError> {
    check_csrf(&web, &visit.headers, &form.csrf)?;
    let caller = work_caller(&web, &visit, "settings", &[]).await?;
    web.work.revoke_token_as_owner(&caller, &id).await?;
    Ok(Redirect::to("/settings#tokens").into_response())
}
