//! The access model, walked whole: every route of the router and every tool of every MCP endpoint, with no
//! credential, with a token lacking the scopes it needs, and with one holding them — on a server that answers another
//! host name, on a loopback server with `--require-auth`, and on a plain loopback server (the local person).
//!
//! The routes come from the router's own table (`cairn_web::access::RULES`), checked against the OpenAPI document,
//! the page router's source and docs/security.md, so a new route cannot be left out; the tools come from
//! docs/security.md's table, checked against each endpoint's `tools/list`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use cairn_web::access::{Door, RULES, Rule};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::support::{Env, Mcp, http, start_logging, start_with, token_as};

/// Every scope.
const ALL: &str = "roscoe:exec,roscoe:write,deepwork:write,mcp:write,decisions:write,metrics:read,admin";
/// A token that works but grants nothing the API routes and tools ask for.
const NOTHING: &str = "admin";
/// A token whose sign-in works but grants nothing the pages ask for (pages never need it; the token forms need admin).
const NOTHING_ON_PAGES: &str = "metrics:read";

fn workspace() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The tables of docs/security.md under `heading`: the cells of each row.
fn doc_table(heading: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(workspace().join("docs/security.md")).unwrap();
    let section = text.split(&format!("### {heading}\n")).nth(1).unwrap_or_else(|| panic!("docs/security.md: ### {heading}"));
    section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().trim_matches('`').replace(" ¹", "")).collect())
        .collect()
}

fn door_name(door: Door) -> &'static str {
    match door {
        Door::Open => "none",
        Door::Page => "sign-in",
        Door::Api => "token",
        Door::Token => "token, always",
        Door::Signed => "signature",
    }
}

#[test]
fn the_documented_table_is_the_routers_and_names_every_route() {
    let documented: Vec<Vec<String>> = doc_table("Routes");
    let actual: Vec<Vec<String>> = RULES
        .iter()
        .map(|r| {
            let scopes = r.needs.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
            vec![r.method.to_owned(), r.path.to_owned(), door_name(r.door).to_owned(), scopes]
        })
        .collect();
    assert_eq!(documented, actual, "docs/security.md's route table must be cairn_web::access::RULES");

    // Page routes, as the page router registers them.
    let pages = std::fs::read_to_string(workspace().join("crates/cairn-web/src/pages.rs")).unwrap();
    let route = regex::Regex::new(r#"\.route\("([^"]+)", ([^)]*\))\)"#).unwrap();
    let mut registered = BTreeSet::new();
    for found in route.captures_iter(&pages) {
        for method in ["get", "post", "put", "delete", "patch"] {
            if found[2].contains(&format!("{method}(")) {
                registered.insert((method.to_uppercase(), found[1].to_owned()));
            }
        }
    }
    assert!(registered.len() > 15, "found the page routes: {registered:?}");
    let ruled: BTreeSet<(String, String)> = RULES.iter().map(|r| (r.method.to_owned(), r.path.to_owned())).collect();
    for page in &registered {
        assert!(ruled.contains(page), "the page route {page:?} has no access rule");
    }
}

#[tokio::test]
async fn every_rest_route_of_the_openapi_document_has_an_access_rule() {
    let env = start_with(&[]).await;
    let document: Value = http().get(env.served.url("/api/openapi.json")).send().await.unwrap().json().await.unwrap();
    let mut described = BTreeSet::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            described.insert((method.to_uppercase(), path.clone()));
        }
    }
    let ruled: BTreeSet<(String, String)> = RULES
        .iter()
        .filter(|r| r.path.starts_with("/api/") && r.path != "/api/openapi.json")
        .map(|r| (r.method.to_owned(), r.path.to_owned()))
        .collect();
    assert_eq!(described, ruled, "the REST routes of /api/openapi.json and of the access table differ");
}

/// How a server was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `--allowed-host cairn.example.test`.
    OtherNames,
    /// `--require-auth` on loopback.
    RequireAuth,
    /// Loopback, nothing else: the local person.
    Loopback,
}

impl Mode {
    fn args(self) -> &'static [&'static str] {
        match self {
            Mode::OtherNames => &["--allowed-host", "cairn.example.test"],
            Mode::RequireAuth => &["--require-auth"],
            Mode::Loopback => &[],
        }
    }

    fn required(self) -> bool {
        self != Mode::Loopback
    }
}

/// A server of `mode` with a DeepWork project, tokens holding every scope and none, and their sign-ins.
struct Walk {
    env: Env,
    mode: Mode,
    all: String,
    nothing: String,
    /// `Cookie:` of a browser signed in with `all` / a token of [`NOTHING_ON_PAGES`].
    signed_all: String,
    signed_nothing: String,
    _project: tempfile::TempDir,
}

impl Walk {
    async fn start(mode: Mode) -> Walk {
        Walk::start_logging(mode, "info").await
    }

    /// [`Walk::start`], the server logging at `level`.
    async fn start_logging(mode: Mode, level: &str) -> Walk {
        let project = tempfile::tempdir().unwrap();
        let mut args: Vec<String> = mode.args().iter().map(|a| a.to_string()).collect();
        args.extend(["--project".to_owned(), project.path().display().to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let env = start_logging(&args, level).await;
        let all = token_as(&env, "Ada", "person", ALL);
        let nothing = token_as(&env, "Nemo", "agent", NOTHING);
        let signed_all = sign_in(&env, &all).await;
        let signed_nothing = sign_in(&env, &token_as(&env, "Nemo", "agent", NOTHING_ON_PAGES)).await;
        Walk { env, mode, all, nothing, signed_all, signed_nothing, _project: project }
    }

    async fn send(&self, rule: &Rule, credential: Credential<'_>) -> (u16, String, Option<String>) {
        let method = match rule.method {
            "*" => "POST",
            other => other,
        };
        let path = rule.path.replace("{name}", "style.css").replace('{', "").replace('}', "");
        let path = if path.starts_with("/api/") && !path.contains('?') { format!("{path}?project=global") } else { path };
        let mut request = http().request(method.parse().unwrap(), self.env.served.url(&path));
        if method != "GET" && method != "DELETE" {
            let body = if rule.path.ends_with("/mcp") {
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
                    "capabilities": {}, "clientInfo": {"name": "walk", "version": "1"}}})
            } else {
                json!({})
            };
            request = request
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(body.to_string());
        }
        request = match credential {
            Credential::None => request,
            Credential::Bearer(token) => request.bearer_auth(token),
            Credential::Cookie(cookie) => request.header("cookie", cookie),
        };
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let location = response.headers().get("location").map(|v| v.to_str().unwrap().to_owned());
        let is_stream = response.headers().get("content-type").is_some_and(|v| v.to_str().unwrap().contains("event-stream"));
        let body = if is_stream && status == 200 { String::new() } else { response.text().await.unwrap_or_default() };
        (status, body, location)
    }

    /// The credential a rule's door takes, holding every scope or none.
    fn credential(&self, rule: &Rule, holding: bool) -> Credential<'_> {
        match (rule.door, holding) {
            (Door::Page | Door::Open, true) => Credential::Cookie(&self.signed_all),
            (Door::Page | Door::Open, false) => Credential::Cookie(&self.signed_nothing),
            (_, true) => Credential::Bearer(&self.all),
            (_, false) => Credential::Bearer(&self.nothing),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Credential<'a> {
    None,
    Bearer(&'a str),
    Cookie(&'a str),
}

/// Signs a browser in with `token`: its `Cookie:` header (the sign-in).
async fn sign_in(env: &Env, token: &str) -> String {
    signed_in_browser(env, token).await.0
}

/// The form token of the `/signin` page for a browser with `cookie`.
async fn form_token(env: &Env, cookie: &str) -> String {
    let page = http().get(env.served.url("/signin")).header("cookie", cookie).send().await.unwrap();
    let html = page.text().await.unwrap();
    regex::Regex::new(r#"name="csrf" value="([0-9a-f]+)""#).unwrap().captures(&html).unwrap()[1].to_owned()
}

/// [`sign_in`], and the form token of that sign-in.
async fn signed_in_browser(env: &Env, token: &str) -> (String, String) {
    let signed = http()
        .post(env.served.url("/signin"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("csrf={}&token={token}", form_token(env, "").await))
        .send()
        .await
        .unwrap();
    assert_eq!(signed.status(), 303, "signing in with a working token");
    let session = signed
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_owned())
        .find(|c| c.starts_with("cairn_session="))
        .unwrap();
    let csrf = form_token(env, &session).await;
    (session, csrf)
}

/// Whether an answer is a refusal of the access layer (401, a redirect to sign in, or 403 insufficient_scope).
fn unauthenticated(status: u16, location: &Option<String>) -> bool {
    status == 401 || (status == 303 && location.as_deref().is_some_and(|l| l.starts_with("/signin")))
}

fn insufficient(status: u16, body: &str) -> bool {
    status == 403 && body.contains("insufficient_scope")
}

async fn walk_routes(walk: &Walk) {
    for rule in RULES {
        let what = format!("{:?} {} {}", walk.mode, rule.method, rule.path);
        // Nothing.
        let (status, body, location) = walk.send(rule, Credential::None).await;
        let needs_credential = match rule.door {
            Door::Open | Door::Signed => false,
            Door::Token => true,
            Door::Api | Door::Page => walk.mode.required(),
        };
        if needs_credential {
            assert!(unauthenticated(status, &location), "{what} without a credential: {status} {location:?} {body}");
            if rule.door == Door::Page {
                assert_eq!(status, 303, "{what}: a page sends the browser to sign in");
            } else {
                let challenge = http_challenge(walk, rule).await;
                assert!(challenge.contains("resource_metadata="), "{what}: the 401 names the metadata: {challenge}");
            }
        } else {
            assert!(!unauthenticated(status, &location) && !insufficient(status, &body), "{what} without a credential: {status} {body}");
        }
        // A token (or sign-in) holding nothing the route needs.
        let (status, body, location) = walk.send(rule, walk.credential(rule, false)).await;
        assert!(!unauthenticated(status, &location), "{what} with a working credential: {status} {location:?} {body}");
        if rule.needs.is_empty() {
            assert!(!insufficient(status, &body), "{what} needs no scope: {status} {body}");
        } else {
            assert!(insufficient(status, &body), "{what} without its scopes: {status} {body}");
            for scope in rule.needs {
                assert!(body.contains(scope.as_str()), "{what}: the refusal names {scope}: {body}");
            }
        }
        // One holding every scope: through the gate, to a handler that exists.
        let (status, body, location) = walk.send(rule, walk.credential(rule, true)).await;
        assert!(!unauthenticated(status, &location) && !insufficient(status, &body), "{what} with its scopes: {status} {body}");
        assert!(!(status == 404 && body.is_empty()), "{what}: the router has no such route");
        assert_ne!(body, "no such page or endpoint", "{what}: no access rule matched");
    }
}

/// The `WWW-Authenticate` of a request for `rule` without a credential.
async fn http_challenge(walk: &Walk, rule: &Rule) -> String {
    let method = if rule.method == "*" { "POST" } else { rule.method };
    let path = rule.path.replace('{', "").replace('}', "");
    let response = http().request(method.parse().unwrap(), walk.env.served.url(&path)).send().await.unwrap();
    response.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
}

/// docs/security.md's tools: endpoint → tool → scopes.
fn documented_tools() -> BTreeMap<String, BTreeMap<String, String>> {
    let mut tools: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for row in doc_table("MCP tools") {
        tools.entry(row[0].clone()).or_default().insert(row[1].clone(), row[2].clone());
    }
    tools
}

fn scope_error(result: &rmcp::model::CallToolResult) -> bool {
    serde_json::to_string(result).unwrap().contains("insufficient_scope")
}

async fn walk_tools(walk: &Walk) {
    let documented = documented_tools();
    assert_eq!(documented.len(), 3, "three MCP endpoints");
    for (endpoint, tools) in &documented {
        let url = walk.env.served.url(endpoint);
        let all = Mcp::connect(url.clone(), &walk.all).await;
        let listed: BTreeSet<String> = all.tool_names().await.into_iter().collect();
        let expected: BTreeSet<String> = tools.keys().cloned().collect();
        assert_eq!(listed, expected, "{endpoint}: tools/list with every scope is docs/security.md's list");
        let nothing = Mcp::connect(url.clone(), &walk.nothing).await;
        assert!(nothing.tool_names().await.is_empty(), "{endpoint}: a token without its scopes sees no tool");
        let mut exact: BTreeMap<&str, Mcp> = BTreeMap::new();
        for (tool, scopes) in tools {
            let refused = nothing.call(tool, json!({})).await;
            assert!(scope_error(&refused), "{endpoint} {tool} without its scopes: {refused:?}");
            let allowed = all.call(tool, json!({})).await;
            assert!(!scope_error(&allowed), "{endpoint} {tool} with every scope: {allowed:?}");
            if !exact.contains_key(scopes.as_str()) {
                let token = token_as(&walk.env, &format!("exactly {scopes}"), "agent", &scopes.replace(' ', ""));
                exact.insert(scopes, Mcp::connect(url.clone(), &token).await);
            }
            let holder = &exact[scopes.as_str()];
            assert!(holder.tool_names().await.contains(tool), "{endpoint} {tool} is listed for a token of {scopes}");
            let called = holder.call(tool, json!({})).await;
            assert!(!scope_error(&called), "{endpoint} {tool} with exactly {scopes}: {called:?}");
        }
    }
}

#[tokio::test]
async fn a_server_answering_other_names_refuses_anonymous_callers_everywhere() {
    let walk = Walk::start_logging(Mode::OtherNames, "debug").await;
    walk_routes(&walk).await;
    walk_tools(&walk).await;
    let log = walk.env.served.log();
    assert!(log.contains("DEBUG"), "the log was kept at debug level");
    // `cairn_<26 characters of id>_<secret>`, and `…; cairn_session=<secret>`.
    let tokens = [&walk.all, &walk.nothing].map(|t| t["cairn_".len() + 27..].to_owned());
    let sessions = [&walk.signed_all, &walk.signed_nothing].map(|c| c.split("cairn_session=").nth(1).unwrap().to_owned());
    for secret in tokens.iter().chain(&sessions) {
        assert!(secret.len() >= 40 && !log.contains(secret.as_str()), "a credential reached the log");
    }
}

#[tokio::test]
async fn require_auth_on_loopback_refuses_anonymous_callers_everywhere() {
    let walk = Walk::start(Mode::RequireAuth).await;
    walk_routes(&walk).await;
    walk_tools(&walk).await;
}

#[tokio::test]
async fn a_plain_loopback_server_keeps_the_local_person() {
    let walk = Walk::start(Mode::Loopback).await;
    walk_routes(&walk).await;
    walk_tools(&walk).await;
}

/// A workflow whose one script node leaves a marker file.
fn marker_workflow(name: &str, marker: &Path) -> String {
    format!(
        "name: {name}\ninitial: touch\nnodes:\n  touch:\n    type: script\n    config:\n      command: touch {}\n    \
         transitions: {{ success: $end, failure: $fail }}\n",
        marker.display()
    )
}

#[tokio::test]
async fn an_anonymous_test_workflow_with_a_script_is_refused_and_runs_nothing() {
    let walk = Walk::start(Mode::OtherNames).await;
    let marker = walk.env.home.join("marker");
    let args = json!({"global": true, "yaml": marker_workflow("marker", &marker)});
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "test_workflow", "arguments": args}});
    let anonymous = http()
        .post(walk.env.served.url("/roscoe/mcp"))
        .header("host", "cairn.example.test")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(call.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);

    let runner = token_as(&walk.env, "runner", "agent", "roscoe:run");
    let refused = Mcp::connect(walk.env.served.url("/roscoe/mcp"), &runner).await.call("test_workflow", args.clone()).await;
    let body = refused.structured_content.clone().unwrap();
    assert_eq!(body["code"], "insufficient_scope", "{body}");
    assert!(body["message"].as_str().unwrap().contains("roscoe:exec"), "{body}");
    let start = Mcp::connect(walk.env.served.url("/roscoe/mcp"), &runner).await;
    let written = start.call("create_workflow", json!({"global": true, "id": "marker", "yaml": marker_workflow("marker", &marker)})).await;
    assert_eq!(written.structured_content.unwrap()["code"], "insufficient_scope", "writing a script node needs roscoe:exec");
    let rest = http()
        .post(walk.env.served.url("/api/runs?project=global"))
        .bearer_auth(&runner)
        .json(&json!({"workflowId": "marker"}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), 404, "nothing was written, so nothing can start");
    assert!(!marker.exists(), "no script ran");

    let exec = token_as(&walk.env, "operator", "person", "roscoe:exec");
    let ran = Mcp::connect(walk.env.served.url("/roscoe/mcp"), &exec).await.call("test_workflow", args).await;
    assert_eq!(ran.structured_content.unwrap()["ok"], true);
    assert!(marker.exists(), "with roscoe:exec the script runs");
}

#[tokio::test]
async fn a_run_started_without_exec_runs_no_script_even_from_a_subworkflow() {
    let walk = Walk::start(Mode::RequireAuth).await;
    let marker = walk.env.home.join("marker");
    let exec = token_as(&walk.env, "operator", "person", "roscoe:exec,roscoe:write");
    let operator = Mcp::connect(walk.env.served.url("/roscoe/mcp"), &exec).await;
    let child = operator.call("create_workflow", json!({"global": true, "id": "child", "yaml": marker_workflow("child", &marker)})).await;
    assert_ne!(child.is_error, Some(true), "{child:?}");
    let parent = "name: parent\ninitial: call\nnodes:\n  call:\n    type: subworkflow\n    config: { workflow: child }\n    \
        transitions: { success: $end, failure: $fail }\n";
    let made = operator.call("create_workflow", json!({"global": true, "id": "parent", "yaml": parent})).await;
    assert_ne!(made.is_error, Some(true), "{made:?}");

    let runner = token_as(&walk.env, "runner", "agent", "roscoe:run");
    let started = Mcp::connect(walk.env.served.url("/roscoe/mcp"), &runner).await.call("start_workflow", json!({"global": true, "id": "parent"})).await;
    let started = started.structured_content.unwrap();
    assert_eq!(started["status"], "failed", "{started}");
    assert!(!marker.exists(), "the subworkflow's script did not run");
    let history = operator.call("get_run_history", json!({"global": true, "run_id": started["runId"]})).await;
    let history = history.structured_content.unwrap();
    assert_eq!(history["run"]["startedBy"], "runner (agent)");
}

impl Mcp {
    /// The names of the tools `tools/list` shows, sorted.
    async fn tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.0.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
        names.sort();
        names
    }

    /// Calls `tool` and returns its result, whatever it is.
    async fn call(&self, tool: &str, args: Value) -> rmcp::model::CallToolResult {
        let Value::Object(args) = args else { panic!("arguments must be an object") };
        self.0.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args)).await.unwrap()
    }
}

#[tokio::test]
async fn origin_null_is_refused_like_any_foreign_origin() {
    let walk = Walk::start(Mode::Loopback).await;
    for (path, bearer) in [("/roscoe/mcp", None), ("/mcp", Some(&walk.all)), ("/api/workflows?project=global", None)] {
        for origin in ["null", "https://evil.example"] {
            let mut request = http().post(walk.env.served.url(path)).header("origin", origin).header("content-type", "application/json");
            if let Some(bearer) = bearer {
                request = request.bearer_auth(bearer);
            }
            let response = request.body("{}").send().await.unwrap();
            assert_eq!(response.status(), 403, "{path} with Origin: {origin}");
        }
    }
}

#[tokio::test]
async fn every_form_post_needs_the_form_token() {
    let walk = Walk::start(Mode::RequireAuth).await;
    let (cookie, csrf) = signed_in_browser(&walk.env, &walk.all).await;
    let mut posts: Vec<&Rule> = RULES.iter().filter(|r| r.method == "POST" && matches!(r.door, Door::Page | Door::Open)).collect();
    // Signing out ends the sign-in the other posts use: last.
    posts.sort_by_key(|r| r.path == "/signout");
    assert!(posts.len() >= 7, "the form posts: {posts:?}");
    for rule in posts {
        let url = walk.env.served.url(&rule.path.replace('{', "").replace('}', ""));
        let post = |token: String| {
            http()
                .post(&url)
                .header("cookie", &cookie)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(format!("csrf={token}&transition=ship&token=&account_id=x&input="))
        };
        let forged = post("0".repeat(64)).send().await.unwrap();
        assert_eq!(forged.status(), 403, "{} {} with a forged form token", rule.method, rule.path);
        assert!(forged.text().await.unwrap().contains("security token is missing or stale"), "{}", rule.path);
        let missing = http().post(&url).header("cookie", &cookie).header("content-type", "application/x-www-form-urlencoded");
        let missing = missing.body("transition=ship").send().await.unwrap();
        assert!(missing.status().is_client_error(), "{} without a form token: {}", rule.path, missing.status());
        let genuine = post(csrf.clone()).send().await.unwrap();
        let status = genuine.status();
        let body = genuine.text().await.unwrap();
        assert!(!body.contains("security token is missing or stale"), "{} with the form token: {status} {body}", rule.path);
    }
}
