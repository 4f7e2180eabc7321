//! What the web tests share: a server on a fresh home with the `ship` workflow (an agent step, then a human
//! decision), a work token of the local account, a plain HTTP client that does not follow redirects, and a browser
//! that signs in and posts forms with their token.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use regex::Regex;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::process::Command;

use crate::cairn_serve::Served;
use crate::database::TestDatabase;

/// An agent drafts, a person decides.
pub const SHIP: &str = "name: ship\ndescription: Draft, then a person decides\ninitial: draft\nnodes:\n  draft:\n    \
    type: ai_agent\n    label: Draft\n    config: { prompt: Write a haiku }\n    transitions: { success: ask }\n  ask:\n    \
    type: human\n    label: Ship?\n    config: { prompt: Ship it?, labels: { ship: Ship it, stop: Stop here } }\n    transitions: { ship: $end, stop: $fail }\n";

/// Only a person's decision.
pub const DECIDE: &str = "name: decide\ninitial: ask\nnodes:\n  ask:\n    type: human\n    \
    config: { prompt: Go?, labels: { ship: Ship it } }\n    transitions: { ship: $end, stop: $fail }\n";

/// A git repository `name` beside the home of [`start_serving`]'s server holding the repo workflow `decide`: a
/// project workspace.
fn project(tmp: &Path, name: &str) -> PathBuf {
    let root = tmp.join(name);
    std::fs::create_dir_all(root.join(".roscoe/workflows")).unwrap();
    std::fs::write(root.join(".roscoe/workflows/decide.yaml"), DECIDE).unwrap();
    let git = std::process::Command::new("git").arg("init").arg("-q").arg(&root).status().unwrap();
    assert!(git.success());
    root.canonicalize().unwrap()
}

/// A running server and its home.
pub struct Env {
    /// The server.
    pub served: Served,
    /// `$CAIRN_HOME`.
    pub home: PathBuf,
    _tmp: tempfile::TempDir,
    /// The server's database (SQLite in the home, or Postgres); dropped last.
    database: TestDatabase,
}

impl Env {
    /// `cairn` (run to completion) on this server's home and database.
    pub fn cairn(&self) -> std::process::Command {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        command.env("CAIRN_HOME", &self.home);
        self.database.apply_std(&mut command);
        command
    }
}

/// Starts `cairn serve` on a fresh home holding the global workflow `ship`.
pub async fn start() -> Env {
    start_with(&[]).await
}

/// [`start`] with more `cairn serve` arguments (`--require-auth`, say).
pub async fn start_with(args: &[&str]) -> Env {
    start_logging(args, "info").await
}

/// [`start`] with the project `name` (see [`project`]) served (`--project`), and its root.
pub async fn start_serving(name: &str) -> (Env, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), name);
    let env = start_in(tmp, &["--project", root.to_str().unwrap()], "info").await;
    (env, root)
}

/// [`start_with`], logging at `level` (`RUST_LOG`).
pub async fn start_logging(args: &[&str], level: &str) -> Env {
    start_in(tempfile::tempdir().unwrap(), args, level).await
}

/// [`start_logging`] in the temporary folder `tmp`.
async fn start_in(tmp: tempfile::TempDir, args: &[&str], level: &str) -> Env {
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    std::fs::write(home.join("workflows").join("ship.yaml"), SHIP).unwrap();
    std::fs::write(home.join("workflows").join("decide.yaml"), DECIDE).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.arg("serve").args(args).env("CAIRN_HOME", &home).env("RUST_LOG", level).env_remove("ROSCOE_PUBLIC_URL");
    let database = TestDatabase::fresh();
    database.apply(&mut command);
    let served = Served::start(command).await;
    Env { served, home, _tmp: tmp, database }
}

/// A token of the local account for principal `name` of `kind` (`person`, `agent`, `service`) with `scopes`.
pub fn token_as(env: &Env, name: &str, kind: &str, scopes: &str) -> String {
    let out = env.cairn().args(["work", "token", "create", "--principal", name, "--kind", kind, "--scopes", scopes]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["token"].as_str().unwrap().to_owned()
}

/// Sends `request` and reads its JSON answer.
pub async fn json_of(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// A work token of the local account with every scope (`cairn work token create`).
pub fn token(env: &Env) -> String {
    let out = env
        .cairn()
        .args(["work", "token", "create", "--principal", "claude-worker", "--kind", "agent"])
        .args(["--scopes", "mcp:read,mcp:write,decisions:read,decisions:write"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    value["token"].as_str().unwrap().to_owned()
}

/// An HTTP client that shows redirects instead of following them.
pub fn http() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// An MCP client of an HTTP endpoint acting with a bearer token.
pub struct Mcp(pub RunningService<RoleClient, ()>);

impl Mcp {
    /// Connects (and initializes) with `bearer`.
    pub async fn connect(url: String, bearer: &str) -> Mcp {
        let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(bearer.to_owned());
        Mcp(().serve(StreamableHttpClientTransport::from_config(config)).await.expect("initialize"))
    }

    /// Calls a tool that must succeed; its structured result.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let Value::Object(args) = args else { panic!("arguments must be an object") };
        let result = self.0.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args)).await.unwrap();
        assert_ne!(result.is_error, Some(true), "{tool} failed: {:?}", result.content);
        result.structured_content.expect("structured content")
    }
}

/// A browser's cookies and the form token of the last page it read.
#[derive(Default)]
pub struct Browser {
    cookies: BTreeMap<String, String>,
    csrf: String,
}

impl Browser {
    /// Signs in at `/signin` with `token`, then reads `/settings`.
    pub async fn sign_in(env: &Env, token: &str) -> Browser {
        let mut browser = Browser::default();
        browser.get(env, "/signin").await;
        let signed = browser.post(env, "/signin", &[("token", token)]).await;
        assert_eq!(signed.0, 303, "signing in: {}", signed.1);
        browser.get(env, "/settings").await;
        browser
    }

    fn keep(&mut self, response: &reqwest::Response) {
        for value in response.headers().get_all("set-cookie") {
            let pair = value.to_str().unwrap().split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            self.cookies.insert(name.to_owned(), value.to_owned());
        }
    }

    fn cookie(&self) -> String {
        self.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ")
    }

    /// The page at `path` (status, HTML); remembers its form token.
    pub async fn get(&mut self, env: &Env, path: &str) -> (u16, String) {
        let response = http().get(env.served.url(path)).header("cookie", self.cookie()).send().await.unwrap();
        self.keep(&response);
        let status = response.status().as_u16();
        let html = response.text().await.unwrap();
        if let Some(found) = Regex::new(r#"name="csrf" value="([0-9a-f]+)""#).unwrap().captures(&html) {
            self.csrf = found[1].to_owned();
        }
        (status, html)
    }

    /// Posts the form `fields` (and the form token) to `path`: the answer's status and text.
    pub async fn post(&mut self, env: &Env, path: &str, fields: &[(&str, &str)]) -> (u16, String) {
        let response = self.post_answer(env, path, fields).await;
        (response.status().as_u16(), response.text().await.unwrap())
    }

    /// Posts the form `fields` (and the form token) to `path`: the answer, its cookies kept.
    pub async fn post_answer(&mut self, env: &Env, path: &str, fields: &[(&str, &str)]) -> reqwest::Response {
        let mut body = vec![format!("csrf={}", self.csrf)];
        body.extend(fields.iter().map(|(k, v)| format!("{k}={}", form_encoded(v))));
        let response = http()
            .post(env.served.url(path))
            .header("cookie", self.cookie())
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.join("&"))
            .send()
            .await
            .unwrap();
        self.keep(&response);
        response
    }
}

/// `value` as a form field's value: everything but letters, digits and `-_.~` percent-encoded.
fn form_encoded(value: &str) -> String {
    let keep = |b: u8| b.is_ascii_alphanumeric() || b"-_.~".contains(&b);
    value.bytes().map(|b| if keep(b) { char::from(b).to_string() } else { format!("%{b:02X}") }).collect()
}
