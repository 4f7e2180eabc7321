//! Test support: fixture projects and an MCP client driving the real `cairn` binary over stdio or HTTP.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation, ListRootsResult,
    ProtocolVersion, Root,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::process::Command;

/// The two transports every scenario runs on.
#[derive(Debug, Clone, Copy)]
pub enum Transport {
    Stdio,
    Http,
}

/// A project directory with fixture jobs, and a private cairn home.
pub struct Project {
    pub dir: tempfile::TempDir,
    pub home: tempfile::TempDir,
}

pub const RESEARCH_JOB: &str = r#"name: research
summary: Research a topic and write a report
step_arguments:
  - name: topic
    description: The topic to research
    type: string
  - name: notes
    description: Research notes file
    type: file_path
  - name: report
    description: The final report
    type: file_path
  - name: verdict
    description: One-line conclusion
    type: string
workflows:
  full:
    summary: Gather notes, write the report, conclude
    common_job_info_provided_to_all_steps_at_runtime: Be concise.
    post_workflow_instructions: Tell the user where the report is.
    steps:
      - name: gather
        instructions: Collect notes about the topic.
        inputs:
          topic: {}
        outputs:
          notes: {}
      - name: write
        instructions: Write the report from the notes.
        inputs:
          notes: {}
          topic: {}
        outputs:
          report: {}
          verdict:
            required: false
      - name: conclude
        instructions: State the conclusion.
        inputs:
          report: {}
        outputs:
          verdict: {}
  quick:
    summary: Only gather notes
    steps:
      - name: gather
        instructions: Collect notes.
        outputs:
          notes: {}
"#;

pub const NESTED_JOB: &str = r#"name: nested
summary: A workflow that runs another one
step_arguments:
  - name: summary_file
    description: Summary
    type: file_path
workflows:
  outer:
    summary: Outer workflow
    steps:
      - name: prepare
        instructions: Prepare.
      - name: delegate
        sub_workflow:
          workflow_name: inner
      - name: finish
        instructions: Finish.
  inner:
    summary: Inner workflow
    steps:
      - name: work
        instructions: Do the inner work.
        outputs:
          summary_file: {}
"#;

pub const SINGLE_JOB: &str = r#"name: single
summary: One workflow, one step
step_arguments:
  - name: answer
    description: The answer
    type: string
workflows:
  only:
    summary: The only workflow
    steps:
      - name: answer
        instructions: Answer.
        outputs:
          answer: {}
"#;

impl Project {
    /// A project with the `research`, `nested` and `single` jobs.
    pub fn new() -> Self {
        let project = Project { dir: tempfile::tempdir().unwrap(), home: tempfile::tempdir().unwrap() };
        project.add_job("research", RESEARCH_JOB);
        project.add_job("nested", NESTED_JOB);
        project.add_job("single", SINGLE_JOB);
        project
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    pub fn add_job(&self, dir: &str, yaml: &str) {
        let path = self.dir.path().join(".deepwork/jobs").join(dir);
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(path.join("job.yml"), yaml).unwrap();
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    pub fn state_file(&self, session: &str, file: &str) -> PathBuf {
        self.dir.path().join(".deepwork/tmp/sessions/claude").join(format!("session-{session}")).join(file)
    }

    /// `cairn deepwork serve --path <project>` plus `extra` arguments.
    pub fn command(&self, extra: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.args(["deepwork", "serve", "--path"]).arg(self.dir.path()).args(extra);
        cmd.env("CAIRN_HOME", self.home.path()).env_remove("DEEPWORK_ADDITIONAL_JOBS_FOLDERS");
        cmd
    }

    /// Starts a server for this project and connects a client over `transport`.
    pub async fn connect(&self, transport: Transport) -> Client {
        match transport {
            Transport::Stdio => Client::stdio(self.command(&[]), TestClient::default()).await,
            Transport::Http => Client::http(self, &[]).await,
        }
    }
}

/// Client side: optionally offers a workspace root, and speaks a chosen protocol version.
#[derive(Clone, Default)]
pub struct TestClient {
    pub root: Option<String>,
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.root.is_some() {
            ClientCapabilities::builder().enable_roots().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("cairn-tests", "0"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    #[allow(deprecated)]
    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(self.root.iter().map(|r| Root::new(r.clone())).collect()))
    }
}

/// A connected client and the server process behind it.
pub struct Client {
    pub service: RunningService<RoleClient, TestClient>,
    pub server: Option<tokio::process::Child>,
}

impl Client {
    /// Spawns `command` and talks to it over stdio.
    pub async fn stdio(mut command: Command, handler: TestClient) -> Client {
        command.stderr(Stdio::null());
        let transport = TokioChildProcess::new(command).expect("spawn cairn");
        let service = handler.serve(transport).await.expect("initialize over stdio");
        Client { service, server: None }
    }

    /// Spawns the server with `--transport http` on a free port and connects to `/mcp`.
    pub async fn http(project: &Project, extra: &[&str]) -> Client {
        install_crypto();
        let port = free_port();
        let port_arg = port.to_string();
        let mut args = vec!["--transport", "http", "--port", &port_arg];
        args.extend_from_slice(extra);
        let mut command = project.command(&args);
        command.stderr(Stdio::null()).stdout(Stdio::null()).kill_on_drop(true);
        let child = command.spawn().expect("spawn cairn");
        wait_for_port(port).await;
        let transport = StreamableHttpClientTransport::from_uri(format!("http://127.0.0.1:{port}/mcp"));
        let service = TestClient::default().serve(transport).await.expect("initialize over HTTP");
        Client { service, server: Some(child) }
    }

    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let Value::Object(args) = args else { panic!("arguments must be an object") };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
        self.service.call_tool(params).await.unwrap_or_else(|e| panic!("{tool}: protocol error {e}"))
    }

    /// Calls a tool that must succeed; returns its structured content (checked against its text).
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let result = self.call(tool, args).await;
        assert_ne!(result.is_error, Some(true), "{tool} failed: {}", text(&result));
        let structured = result.structured_content.clone().expect("structured content");
        let from_text: Value = serde_json::from_str(&text(&result)).expect("text is JSON");
        assert_eq!(from_text, structured, "text and structuredContent differ");
        structured
    }

    /// Calls a tool that must fail with `isError`; returns the error text.
    pub async fn fail(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args).await;
        assert_eq!(result.is_error, Some(true), "{tool} unexpectedly succeeded: {}", text(&result));
        text(&result)
    }

    /// Calls a tool that must answer with a soft `{"error": ...}` result; returns the message.
    pub async fn soft_error(&self, tool: &str, args: Value) -> String {
        let value = self.ok(tool, args).await;
        value["error"].as_str().unwrap_or_else(|| panic!("{tool}: no soft error in {value}")).to_owned()
    }

    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}

pub fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("")
}

/// The HTTP client is built without a default TLS provider (only plain HTTP to loopback is used): install one.
pub fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub async fn wait_for_port(port: u16) {
    for _ in 0..400 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("server did not listen on port {port}");
}

/// The stack as `[(workflow, step)]`.
pub fn stack(value: &Value) -> Vec<(String, String)> {
    value["stack"]
        .as_array()
        .expect("stack")
        .iter()
        .map(|e| (e["workflow"].as_str().unwrap().to_owned(), e["step"].as_str().unwrap().to_owned()))
        .collect()
}

pub fn entry(workflow: &str, step: &str) -> (String, String) {
    (workflow.to_owned(), step.to_owned())
}

/// Arguments of `start_workflow` for session `session`.
pub fn start(job: &str, workflow: &str, session: &str) -> Value {
    json!({"goal": "test goal", "job_name": job, "workflow_name": workflow, "session_id": session})
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
