//! Test support: a private cairn home, the `cairn work` CLI for accounts and tokens, and MCP clients of the work tools
//! over stdio (`cairn work mcp`) and HTTP (`cairn serve`, `/mcp` with a bearer token).

use std::process::Stdio;

use rmcp::model::CallToolResult;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use tokio::process::Command;

use crate::cairn_serve::Served;
use crate::database::TestDatabase;
pub use crate::tool_call::text;
use crate::tool_call::{call_tool, succeeded};

/// Which transport a test drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `cairn work mcp` with `CAIRN_TOKEN`.
    Stdio,
    /// `/mcp` of `cairn serve` with `Authorization: Bearer`.
    Http,
}

/// Every scope.
pub const ALL: &str = "mcp:read,mcp:write,decisions:read,decisions:write";

/// A private cairn home and database (SQLite in the home, or Postgres — see [`TestDatabase`]), with a `cairn serve`
/// started on demand.
pub struct Env {
    pub tmp: tempfile::TempDir,
    served: Option<Served>,
    /// Dropped last, once the servers using it are gone.
    database: TestDatabase,
}

impl Env {
    pub fn new() -> Env {
        Env { tmp: tempfile::tempdir().unwrap(), served: None, database: TestDatabase::fresh() }
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.env("CAIRN_HOME", self.tmp.path().join("home")).env_remove("CAIRN_TOKEN").env_remove("CAIRN_URL");
        self.database.apply(&mut cmd);
        cmd
    }

    /// `cairn work <args>`, which must succeed; its JSON output.
    pub async fn cli(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.cli_text(args).await).expect("the CLI prints JSON")
    }

    /// `cairn work <args>`, which must succeed; what it printed.
    pub async fn cli_text(&self, args: &[&str]) -> String {
        let output = self.command().arg("work").args(args).stdin(Stdio::null()).output().await.unwrap();
        assert!(output.status.success(), "cairn work {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).expect("the CLI prints UTF-8")
    }

    /// `cairn work <args>`, which must fail; its stderr.
    pub async fn cli_fails(&self, args: &[&str]) -> String {
        let output = self.command().arg("work").args(args).stdin(Stdio::null()).output().await.unwrap();
        assert!(!output.status.success(), "cairn work {args:?} succeeded");
        String::from_utf8_lossy(&output.stderr).into_owned()
    }

    /// `cairn work <args>` with the extra environment `envs`, whatever its outcome: its exit code and output.
    pub async fn cli_run(&self, args: &[&str], envs: &[(&str, &str)]) -> Ran {
        let mut cmd = self.command();
        cmd.arg("work").args(args).envs(envs.iter().copied()).stdin(Stdio::null());
        let output = cmd.output().await.unwrap();
        Ran {
            code: output.status.code().expect("the CLI exits, not killed by a signal"),
            stdout: String::from_utf8(output.stdout).expect("the CLI prints UTF-8"),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// A new account; its id.
    pub async fn account(&self, name: &str, default_repository: &str) -> String {
        let account =
            self.cli(&["account", "create", "--name", name, "--default-repository", default_repository]).await;
        account["id"].as_str().unwrap().to_owned()
    }

    /// A token for principal `name` of `kind` in `account` with `scopes`; the whole `token create` output.
    pub async fn token(&self, account: &str, name: &str, kind: &str, scopes: &str) -> Value {
        self.cli(&["token", "create", "--account", account, "--principal", name, "--kind", kind, "--scopes", scopes])
            .await
    }

    /// The bearer secret of a new token.
    pub async fn bearer(&self, account: &str, name: &str, kind: &str, scopes: &str) -> String {
        self.token(account, name, kind, scopes).await["token"].as_str().unwrap().to_owned()
    }

    /// `cairn serve` on this home (started once).
    pub async fn served(&mut self) -> &Served {
        if self.served.is_none() {
            let mut cmd = self.command();
            cmd.arg("serve");
            self.served = Some(Served::start(cmd).await);
        }
        self.served.as_ref().unwrap()
    }

    /// Whether the database is PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        self.database.is_postgres()
    }

    /// Another `cairn serve` process on the same database.
    pub async fn second_server(&self) -> Served {
        self.server_with(&[]).await
    }

    /// Another `cairn serve` process on the same database, started with `args`.
    pub async fn server_with(&self, args: &[&str]) -> Served {
        let mut cmd = self.command();
        cmd.arg("serve").args(args);
        Served::start(cmd).await
    }

    /// `cairn <args>`, which must fail; its stderr.
    pub async fn cairn_fails(&self, args: &[&str]) -> String {
        let output = self.command().args(args).stdin(Stdio::null()).output().await.unwrap();
        assert!(!output.status.success(), "cairn {args:?} succeeded");
        String::from_utf8_lossy(&output.stderr).into_owned()
    }

    /// A client acting with `bearer` over `via`.
    pub async fn client(&mut self, via: Via, bearer: &str) -> Client {
        match via {
            Via::Stdio => {
                let mut cmd = self.command();
                cmd.args(["work", "mcp"]).env("CAIRN_TOKEN", bearer);
                Client::stdio(cmd).await
            }
            Via::Http => {
                let url = self.served().await.url("/mcp");
                Client::http(&url, bearer).await
            }
        }
    }

    /// `cairn work mcp --as <kind>`: the local user, no token.
    pub async fn local(&self, kind: &str) -> Client {
        Client::stdio(self.local_command(kind)).await
    }

    /// The command of [`Env::local`], not started.
    pub fn local_command(&self, kind: &str) -> Command {
        let mut cmd = self.command();
        cmd.args(["work", "mcp", "--as", kind]);
        cmd
    }
}

/// How a finished `cairn work` command ended ([`Env::cli_run`]).
#[derive(Debug)]
pub struct Ran {
    /// Its exit code.
    pub code: i32,
    /// What it printed on stdout.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
}

/// A connected MCP client.
pub struct Client {
    pub service: RunningService<RoleClient, ()>,
}

impl Client {
    pub async fn stdio(mut command: Command) -> Client {
        command.stderr(Stdio::null());
        let transport = TokioChildProcess::new(command).expect("spawn the server");
        Client { service: ().serve(transport).await.expect("initialize over stdio") }
    }

    pub async fn http(url: &str, bearer: &str) -> Client {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(bearer.to_owned());
        let transport = StreamableHttpClientTransport::from_config(config);
        Client { service: ().serve(transport).await.expect("initialize over HTTP") }
    }

    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        call_tool(&self.service, tool, args).await
    }

    /// Calls a tool that must succeed; its structured content (checked against the text block).
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        succeeded(tool, &self.call(tool, args).await)
    }

    /// Calls a tool that must fail with `code`; the `error` object (`{code, message, details}`).
    pub async fn fail(&self, tool: &str, args: Value, code: &str) -> Value {
        let result = self.call(tool, args).await;
        assert_eq!(result.is_error, Some(true), "{tool} unexpectedly succeeded: {}", text(&result));
        let error = result.structured_content.clone().expect("structured error")["error"].clone();
        assert_eq!(error["code"], code, "{tool}: {error}");
        assert_eq!(error["message"].as_str(), Some(text(&result).as_str()), "the text block is the message");
        error
    }

    /// The names `tools/list` shows.
    pub async fn tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> =
            self.service.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
        names.sort();
        names
    }

    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}

/// A fresh home with the account `acme` and its agent `worker` holding every scope, connected over `via`: the home
/// (keep it while the client is used) and the client.
pub async fn worker(via: Via) -> (Env, Client) {
    let mut env = Env::new();
    let account = env.account("acme", "").await;
    let bearer = env.bearer(&account, "worker", "agent", ALL).await;
    let client = env.client(via, &bearer).await;
    (env, client)
}

/// A space named `name` made by `client`; its id.
pub async fn space(client: &Client, name: &str) -> String {
    let made = client.ok("decisions_create_space", json!({"name": name, "description": "for tests"})).await;
    made["space"]["id"].as_str().unwrap().to_owned()
}

/// A work item titled `title` in `space`; its id.
pub async fn item(client: &Client, space: &str, title: &str) -> String {
    let made = client.ok("work_create", json!({"space_id": space, "title": title})).await;
    assert_eq!(made["item"]["state"], "open");
    made["item"]["id"].as_str().unwrap().to_owned()
}
