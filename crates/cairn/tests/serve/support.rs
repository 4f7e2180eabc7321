//! What the serve tests share: a workflow with an agent step and a decision, a default server on a fresh home,
//! `cairn` on a test's home and database, tokens made with the CLI, and MCP clients over Streamable HTTP with a bearer
//! token.

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::process::Command;

use crate::cairn_serve::Served;
use crate::database::TestDatabase;

/// An agent step, then a person's decision.
pub const SHIP: &str = "name: ship\ninitial: draft\nnodes:\n  draft:\n    type: ai_agent\n    config: { prompt: Write a haiku }\n    \
    transitions: { success: ask }\n  ask:\n    type: human\n    config: { prompt: Ship it? }\n    \
    transitions: { ship: $end, stop: $fail }\n";

/// `cairn` on `home` and `database`, without the caller's token or log filter.
pub fn cairn(home: &std::path::Path, database: &TestDatabase) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.env("CAIRN_HOME", home).env_remove("CAIRN_TOKEN").env_remove("RUST_LOG").kill_on_drop(true);
    database.apply(&mut command);
    command
}

/// A default `cairn serve` on a fresh home and database; the server stops before they are removed.
pub struct FreshServe {
    /// The server.
    pub served: Served,
    database: TestDatabase,
    home: tempfile::TempDir,
}

impl FreshServe {
    /// A new token of the server's local account for `principal` with `scopes`; the bearer token.
    pub async fn token(&self, principal: &str, scopes: &str) -> String {
        token(&self.home.path().join("home"), &self.database, principal, scopes).await
    }
}

/// Starts [`FreshServe`]: `cairn serve` with nothing but its home and database.
pub async fn fresh_serve() -> FreshServe {
    fresh_serve_with(&[]).await
}

/// [`fresh_serve`] with more `cairn serve` arguments.
pub async fn fresh_serve_with(args: &[&str]) -> FreshServe {
    let home = tempfile::tempdir().unwrap();
    let database = TestDatabase::fresh();
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.arg("serve").args(args).env("CAIRN_HOME", home.path().join("home"));
    database.apply(&mut command);
    FreshServe { served: Served::start(command).await, database, home }
}

/// A new token of the local account for `principal` with `scopes`; the bearer token.
pub async fn token(home: &std::path::Path, database: &TestDatabase, principal: &str, scopes: &str) -> String {
    let args = ["work", "token", "create", "--principal", principal, "--kind", "agent", "--scopes", scopes, "--format", "token"];
    let output = cairn(home, database).args(args).output().await.unwrap();
    assert!(output.status.success(), "token create: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// An MCP client of `url` with `bearer`.
pub async fn client(url: String, bearer: &str) -> RunningService<RoleClient, ()> {
    let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(bearer.to_owned());
    ().serve(StreamableHttpClientTransport::from_config(config)).await.expect("initialize over HTTP")
}

/// Calls `tool`, which must answer.
pub async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else { panic!("arguments are an object") };
    client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args)).await.expect(tool)
}

/// Calls a tool that must succeed; its structured content.
pub async fn ok(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> Value {
    let result = call(client, tool, args).await;
    assert_ne!(result.is_error, Some(true), "{tool}: {result:?}");
    result.structured_content.expect("structured content")
}
