//! Test support: a private cairn home, git repositories as projects, and an MCP client driving the real binary.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use rmcp::model::CallToolResult;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

use tokio::process::Command;

use crate::cairn_serve::Served;
use crate::database::TestDatabase;
pub use crate::tool_call::text;
use crate::tool_call::call_tool;

/// The two transports the authoring tools are served on.
#[derive(Debug, Clone, Copy)]
pub enum Transport {
    /// `cairn roscoe mcp` on stdin/stdout.
    Stdio,
    /// `/roscoe/mcp` of `cairn serve` (Streamable HTTP).
    Http,
}

/// Both transports, for tests that run their scenario on each.
pub const TRANSPORTS: [Transport; 2] = [Transport::Stdio, Transport::Http];

/// Variables that would point git at another repository than the one around its working directory.
const GIT_LOCATION_VARIABLES: [&str; 6] =
    ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_NAMESPACE"];

/// A one-node workflow named `name`.
pub fn simple(name: &str) -> String {
    format!(
        "name: {name}\ndescription: Says hi\ninitial: step\nnodes:\n  step:\n    type: script\n    config: {{ command: \"echo hi\" }}\n    transitions: {{ success: $end, failure: $fail }}\n"
    )
}

/// A workflow `name` whose `call` node runs workflow `child`, with comments that a rewrite must keep.
pub fn parent(name: &str, child: &str) -> String {
    format!(
        "# {name}: calls {child}\nname: {name}   # keep me\ninitial: call\nnodes:\n  call:\n    type: subworkflow\n    config:\n      workflow: \"{child}\"   # the child\n      inputs: {{}}\n    transitions: {{ success: $end, failure: $fail }}\n"
    )
}

/// A private cairn home plus any number of project directories, all in one temporary directory, and a database of
/// its own (SQLite in the home, or Postgres — see [`TestDatabase`]) that every process of the test shares.
pub struct Env {
    pub tmp: tempfile::TempDir,
    database: TestDatabase,
    /// The repositories [`Env::repo`] made: the projects a `cairn serve` of this test serves (`--project`).
    repos: std::sync::Mutex<Vec<PathBuf>>,
}

impl Env {
    pub fn new() -> Env {
        let env = Env { tmp: tempfile::tempdir().unwrap(), database: TestDatabase::fresh(), repos: Default::default() };
        // Private, as cairn makes its home (else every command would log that it tightened it).
        std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700).create(env.home()).unwrap();
        std::fs::create_dir_all(env.git_home()).unwrap();
        env
    }

    /// `CAIRN_HOME`.
    pub fn home(&self) -> PathBuf {
        self.tmp.path().join("cairn-home")
    }

    /// Whether this test's processes share a Postgres database (else the SQLite file in the home).
    pub fn is_postgres(&self) -> bool {
        self.database.is_postgres()
    }

    /// The database every process of this test uses, opened here (for checks the tools cannot make).
    pub async fn store(&self) -> cairn_store::Store {
        let url = self.database.url().map_or_else(|| cairn_store::Store::default_url(&self.home()), str::to_owned);
        cairn_store::Store::open(&url).await.unwrap()
    }

    /// The global source.
    pub fn global_dir(&self) -> PathBuf {
        self.home().join("workflows")
    }

    fn git_home(&self) -> PathBuf {
        self.tmp.path().join("git-home")
    }

    /// A new git repository `name` (canonical path).
    pub fn repo(&self, name: &str) -> PathBuf {
        let dir = self.tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let mut git = std::process::Command::new("git");
        git.args(["init", "-q"]).current_dir(&dir).stdin(Stdio::null());
        self.isolate_std(&mut git);
        let status = git.status().unwrap();
        assert!(status.success(), "git init");
        let dir = dir.canonicalize().unwrap();
        self.repos.lock().unwrap().push(dir.clone());
        dir
    }

    fn git_vars(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("GIT_CONFIG_NOSYSTEM", PathBuf::from("1")),
            ("HOME", self.git_home()),
            ("XDG_CONFIG_HOME", self.git_home()),
            ("GIT_CEILING_DIRECTORIES", self.tmp.path().to_path_buf()),
        ]
    }

    fn isolate_std(&self, cmd: &mut std::process::Command) {
        for (name, value) in self.git_vars() {
            cmd.env(name, value);
        }
        for name in GIT_LOCATION_VARIABLES {
            cmd.env_remove(name);
        }
    }

    /// `<binary> [cairn-args…] mcp` with this home and isolated git.
    pub fn command(&self, binary: &str, prefix: &[&str]) -> Command {
        let mut cmd = self.cli(binary, prefix);
        cmd.arg("mcp");
        cmd
    }

    /// `<binary> args…` with this home, this test's database and isolated git.
    pub fn cli(&self, binary: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(binary);
        cmd.args(args).env("CAIRN_HOME", self.home());
        self.database.apply(&mut cmd);
        for (name, value) in self.git_vars() {
            cmd.env(name, value);
        }
        for name in GIT_LOCATION_VARIABLES {
            cmd.env_remove(name);
        }
        cmd
    }

    /// `cairn roscoe mcp`, connected.
    pub async fn connect(&self) -> Client {
        Client::stdio(self.command(env!("CARGO_BIN_EXE_cairn"), &["roscoe"])).await
    }

    /// A server on `transport` with this home, connected: `cairn roscoe mcp`, or `cairn serve` at `/roscoe/mcp`
    /// serving every repository made so far (`--project`).
    pub async fn connect_over(&self, transport: Transport) -> Client {
        match transport {
            Transport::Stdio => self.connect().await,
            Transport::Http => {
                let served = self.serve(&[], &[]).await;
                let transport = StreamableHttpClientTransport::from_uri(served.url("/roscoe/mcp"));
                let service = ().serve(transport).await.expect("initialize over HTTP");
                Client { service, _server: Some(served) }
            }
        }
    }

    /// `cairn serve args…` with this home, this test's database, isolated git and the variables `vars`, serving every
    /// repository made so far (`--project`), started.
    pub async fn serve(&self, args: &[&str], vars: &[(&str, &str)]) -> Served {
        let mut command = self.cli(env!("CARGO_BIN_EXE_cairn"), &["serve"]);
        command.envs(vars.iter().copied());
        for repo in self.repos.lock().unwrap().iter() {
            command.arg("--project").arg(repo);
        }
        command.args(args);
        Served::start(command).await
    }

    /// A token of principal `name` (an agent) with `scopes` (comma-separated), made with `cairn work token create`.
    pub async fn token(&self, name: &str, scopes: &str) -> String {
        let args = ["work", "token", "create", "--principal", name, "--kind", "agent", "--scopes", scopes];
        let out = self.cli(env!("CARGO_BIN_EXE_cairn"), &args).output().await.unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["token"].as_str().unwrap().to_owned()
    }
}

/// A connected client and the server process behind it.
pub struct Client {
    pub service: RunningService<RoleClient, ()>,
    /// The `cairn serve` process behind an HTTP client (a stdio server belongs to the service).
    _server: Option<Served>,
}

impl Client {
    pub async fn stdio(mut command: Command) -> Client {
        command.stderr(Stdio::null());
        let transport = TokioChildProcess::new(command).expect("spawn the server");
        let service = ().serve(transport).await.expect("initialize over stdio");
        Client { service, _server: None }
    }

    /// A client of `/roscoe/mcp` on `served` acting with the token `bearer`.
    pub async fn http(served: &Served, bearer: &str) -> Client {
        let config = StreamableHttpClientTransportConfig::with_uri(served.url("/roscoe/mcp")).auth_header(bearer.to_owned());
        let service = ().serve(StreamableHttpClientTransport::from_config(config)).await.expect("initialize over HTTP");
        Client { service, _server: None }
    }

    /// [`Client::stdio`], also giving the server's process id (to kill it).
    pub async fn stdio_with_pid(mut command: Command) -> (Client, u32) {
        command.stderr(Stdio::null());
        let transport = TokioChildProcess::new(command).expect("spawn the server");
        let pid = transport.id().expect("the server's pid");
        let service = ().serve(transport).await.expect("initialize over stdio");
        (Client { service, _server: None }, pid)
    }

    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        call_tool(&self.service, tool, args).await
    }

    /// Calls a tool that must succeed; returns its result (the text, checked against `structuredContent`).
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let result = self.call(tool, args).await;
        assert_ne!(result.is_error, Some(true), "{tool} failed: {}", text(&result));
        let value: Value = serde_json::from_str(&text(&result)).expect("text is JSON");
        let structured = result.structured_content.clone().expect("structured content");
        match &value {
            Value::Array(_) => assert_eq!(structured["result"], value, "text and structuredContent differ"),
            _ => assert_eq!(structured, value, "text and structuredContent differ"),
        }
        value
    }

    /// Calls a tool that must fail with `isError`; returns the `{ error, code, … }` object.
    pub async fn fail(&self, tool: &str, args: Value) -> Value {
        let result = self.call(tool, args).await;
        assert_eq!(result.is_error, Some(true), "{tool} unexpectedly succeeded: {}", text(&result));
        let value: Value = serde_json::from_str(&text(&result)).expect("error text is JSON");
        // Structured content is kept only where it fits the tool's output schema (cairn-mcp's error_fit.rs).
        if let Some(structured) = &result.structured_content {
            assert_eq!(structured, &value, "text and structuredContent differ");
        }
        assert!(value["error"].as_str().is_some_and(|e| !e.is_empty()), "{tool}: no message in {value}");
        value
    }

    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}

/// `path` as a JSON string.
pub fn s(path: &Path) -> String {
    path.to_str().unwrap().to_owned()
}
