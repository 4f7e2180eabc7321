//! The cluster a multi-node test runs: one database and `cairn serve` nodes on it, each with a `CAIRN_HOME` of its
//! own holding the same global workflows (as nodes on different machines would), a work token, and MCP clients.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::process::Command;

use crate::cairn_serve::Served;
use crate::database::{POSTGRES_ENV, TestDatabase};

/// An agent step, then a person's decision.
pub const SHIP: &str = "name: ship\ninitial: draft\nnodes:\n  draft:\n    type: ai_agent\n    config: { prompt: Write a haiku }\n    \
    transitions: { success: ask }\n  ask:\n    type: human\n    config: { prompt: Ship it? }\n    \
    transitions: { ship: $end, stop: $fail }\n";

/// Every work scope.
pub const ALL_SCOPES: &str = "mcp:read,mcp:write,decisions:read,decisions:write";

/// One database and the homes of the nodes started on it.
pub struct Cluster {
    database: TestDatabase,
    tmp: tempfile::TempDir,
}

impl Cluster {
    /// A cluster on a fresh Postgres database, or `None` (with a notice) when `CAIRN_TEST_POSTGRES_URL` is unset.
    pub fn postgres(test: &str) -> Option<Cluster> {
        let cluster = Cluster::any();
        if cluster.database.is_postgres() {
            Some(cluster)
        } else {
            println!("skipped {test}: several nodes need PostgreSQL; set {POSTGRES_ENV} to run it");
            None
        }
    }

    /// A cluster on whichever database the environment picks (on SQLite, every node opens one shared file).
    pub fn any() -> Cluster {
        Cluster { database: TestDatabase::fresh(), tmp: tempfile::tempdir().unwrap() }
    }

    /// The database URL every node uses.
    fn database_url(&self) -> String {
        match self.database.url() {
            Some(url) => url.to_owned(),
            None => format!("sqlite://{}?mode=rwc", self.tmp.path().join("shared.db").display()),
        }
    }

    /// `cairn` with the home of node `node` (holding the global workflows) on the cluster's database.
    fn command(&self, node: &str) -> Command {
        let home = self.home(node);
        std::fs::create_dir_all(home.join("workflows")).unwrap();
        std::fs::write(home.join("workflows/ship.yaml"), SHIP).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
        command
            .env("CAIRN_HOME", &home)
            .env("CAIRN_DATABASE_URL", self.database_url())
            .env_remove("CAIRN_TOKEN")
            .env_remove("ROSCOE_PUBLIC_URL");
        command
    }

    /// `$CAIRN_HOME` of node `node`.
    pub fn home(&self, node: &str) -> PathBuf {
        self.tmp.path().join(node)
    }

    /// Starts node `node`.
    pub async fn node(&self, node: &str) -> Served {
        let mut command = self.command(node);
        command.arg("serve");
        Served::start(command).await
    }

    /// A work token of the local account with every scope; its bearer secret.
    pub async fn bearer(&self) -> String {
        self.token(ALL_SCOPES).await["token"].as_str().unwrap().to_owned()
    }

    /// A work token of the local account with `scopes`, as `cairn work token create` prints it (`token`,
    /// `token_id`, …).
    pub async fn token(&self, scopes: &str) -> Value {
        let output = self.admin(&["token", "create", "--principal", "swarm", "--kind", "agent", "--scopes", scopes]).await;
        serde_json::from_slice(&output).unwrap()
    }

    /// `cairn roscoe ARGS` with the home of node `node` on the cluster's database (an operator's shell there); its
    /// standard output.
    pub async fn roscoe(&self, node: &str, args: &[&str]) -> String {
        let output = self.command(node).arg("roscoe").args(args).stdin(Stdio::null()).output().await.unwrap();
        assert!(output.status.success(), "roscoe {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    /// `cairn work ARGS` on the cluster's database (from a home of its own, as an operator's shell); its output.
    pub async fn admin(&self, args: &[&str]) -> Vec<u8> {
        let output = self.command("admin").arg("work").args(args).stdin(Stdio::null()).output().await.unwrap();
        assert!(output.status.success(), "work {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        output.stdout
    }
}

/// An MCP client over Streamable HTTP.
pub struct Client {
    service: RunningService<RoleClient, ()>,
}

impl Client {
    /// Connects to `url`, with `bearer` when given.
    pub async fn http(url: &str, bearer: Option<&str>) -> Client {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        if let Some(bearer) = bearer {
            config = config.auth_header(bearer.to_owned());
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        Client { service: ().serve(transport).await.expect("initialize over HTTP") }
    }

    /// Calls `tool`; `Err` when no answer came (the node went away), however the client noticed.
    pub async fn try_call(&self, tool: &str, args: Value) -> Result<CallToolResult, String> {
        let Value::Object(args) = args else { panic!("arguments must be an object") };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
        match tokio::time::timeout(Duration::from_secs(60), self.service.call_tool(params)).await {
            Ok(answer) => answer.map_err(|e| e.to_string()),
            Err(_) => Err(format!("{tool}: no answer within a minute")),
        }
    }

    /// Calls `tool`, which must answer.
    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        self.try_call(tool, args).await.unwrap_or_else(|e| panic!("{tool}: protocol error {e}"))
    }

    /// Calls a tool that must succeed; its structured content.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let result = self.call(tool, args).await;
        assert_ne!(result.is_error, Some(true), "{tool} failed: {result:?}");
        result.structured_content.expect("structured content")
    }

    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}
