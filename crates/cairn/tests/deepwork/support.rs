//! Test support: fixture projects and an MCP client driving the real `cairn` binary over stdio or HTTP.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, ClientCapabilities, ClientConfig, Implementation, ListRootsResult,
    ProtocolVersion, Root,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::process::Command;

pub use crate::tool_call::text;
use crate::tool_call::{call_tool, succeeded};

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
        let project = Project::empty();
        project.add_job("research", RESEARCH_JOB);
        project.add_job("nested", NESTED_JOB);
        project.add_job("single", SINGLE_JOB);
        project
    }

    /// A project without jobs.
    pub fn empty() -> Self {
        Project { dir: tempfile::tempdir().unwrap(), home: tempfile::tempdir().unwrap() }
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
        self.command_at(self.dir.path(), extra)
    }

    /// `cairn deepwork serve --path <path>` plus `extra` arguments, with this project's cairn home; git (which the
    /// review tools run) sees neither the machine's nor the user's configuration.
    pub fn command_at(&self, path: &Path, extra: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.args(["deepwork", "serve", "--path"]).arg(path).args(extra);
        cmd.env("CAIRN_HOME", self.home.path())
            .env_remove("DEEPWORK_ADDITIONAL_JOBS_FOLDERS")
            .env_remove("DEEPWORK_ADDITIONAL_SCHEMAS_FOLDERS");
        for (name, value) in self.git_env() {
            cmd.env(name, value);
        }
        for name in GIT_LOCATION_VARIABLES {
            cmd.env_remove(name);
        }
        cmd
    }

    /// Variables that isolate git from the machine: no system config, a private `HOME` (no global config), and no
    /// repository above the project's temporary directory.
    fn git_env(&self) -> Vec<(&'static str, PathBuf)> {
        let home = self.home.path().join("git-home");
        std::fs::create_dir_all(&home).unwrap();
        // git looks for a repository no higher than the directory holding the project (a temporary directory).
        let ceiling = self.dir.path().parent().unwrap().to_path_buf();
        vec![
            ("GIT_CONFIG_NOSYSTEM", PathBuf::from("1")),
            ("HOME", home.clone()),
            ("XDG_CONFIG_HOME", home),
            ("GIT_CEILING_DIRECTORIES", ceiling),
        ]
    }

    /// Runs `git <args>` in `dir` (isolated from the machine's configuration); panics unless it succeeds. Returns
    /// its standard output.
    pub fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let mut cmd = std::process::Command::new("git");
        cmd.args(["-c", "user.name=cairn tests", "-c", "user.email=tests@cairn.invalid", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null());
        for (name, value) in self.git_env() {
            cmd.env(name, value);
        }
        for name in GIT_LOCATION_VARIABLES {
            cmd.env_remove(name);
        }
        let output = cmd.output().expect("run git");
        assert!(
            output.status.success(),
            "git {args:?} failed in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// Runs `git <args>` in the project directory.
    pub fn git(&self, args: &[&str]) -> String {
        self.git_in(self.dir.path(), args)
    }

    /// Makes the project a git repository on branch `main` with everything committed.
    pub fn git_init(&self) {
        self.git(&["init", "-q", "-b", "main"]);
        self.commit_all("initial");
    }

    /// Stages and commits everything in the project.
    pub fn commit_all(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
    }

    /// `deepwork serve --transport <transport>` (`http` or `sse`) for this project on a free port, listening: the
    /// process (killed on drop) and its `127.0.0.1:PORT`.
    pub async fn serve_over(&self, transport: &str) -> (tokio::process::Child, String) {
        install_crypto();
        let port = free_port();
        let mut command = self.command(&["--transport", transport, "--port", &port.to_string()]);
        command.stderr(Stdio::null()).stdout(Stdio::null()).kill_on_drop(true);
        let server = command.spawn().expect("spawn cairn");
        wait_for_port(port).await;
        (server, format!("127.0.0.1:{port}"))
    }

    /// A server for `--path <path>` (e.g. a subdirectory or a worktree) with `extra` arguments, over stdio.
    pub async fn connect_at(&self, path: &Path, extra: &[&str]) -> Client {
        Client::stdio(self.command_at(path, extra), TestClient::default()).await
    }

    /// Starts a server for this project and connects a client over `transport`.
    pub async fn connect(&self, transport: Transport) -> Client {
        match transport {
            Transport::Stdio => Client::stdio(self.command(&[]), TestClient::default()).await,
            Transport::Http => Client::http(self, &[]).await,
        }
    }
}

/// Variables that would point git at another repository than the one around its working directory.
const GIT_LOCATION_VARIABLES: [&str; 6] =
    ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_NAMESPACE"];

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
        // A free port can be taken by another process between probing and binding it: try a few.
        for _ in 0..3 {
            let port = free_port();
            let port_arg = port.to_string();
            let mut args = vec!["--transport", "http", "--port", &port_arg];
            args.extend_from_slice(extra);
            let mut command = project.command(&args);
            command.stderr(Stdio::null()).stdout(Stdio::null()).kill_on_drop(true);
            let mut child = command.spawn().expect("spawn cairn");
            wait_for_port(port).await;
            let transport = StreamableHttpClientTransport::from_uri(format!("http://127.0.0.1:{port}/mcp"));
            match TestClient::default().serve(transport).await {
                Ok(service) => return Client { service, server: Some(child) },
                Err(_) => {
                    let _ = child.kill().await;
                }
            }
        }
        panic!("could not start an HTTP server and initialize a session in three tries");
    }

    /// Connects to a server already listening at `url` (its `/mcp`).
    pub async fn http_at(url: &str) -> Client {
        install_crypto();
        let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
        Client { service: TestClient::default().serve(transport).await.expect("initialize over HTTP"), server: None }
    }

    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        call_tool(&self.service, tool, args).await
    }

    /// Calls a tool that must succeed; returns its structured content (checked against its text).
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        succeeded(tool, &self.call(tool, args).await)
    }

    /// Calls a tool that must fail with `isError`; returns the error text.
    pub async fn fail(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args).await;
        assert_eq!(result.is_error, Some(true), "{tool} unexpectedly succeeded: {}", text(&result));
        text(&result)
    }

    /// Calls a tool whose result is one string (the review tools); returns it (checked against structuredContent).
    pub async fn text_ok(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args).await;
        assert_ne!(result.is_error, Some(true), "{tool} failed: {}", text(&result));
        let text = text(&result);
        assert_eq!(result.structured_content, Some(json!({"result": text})), "text and structuredContent differ");
        text
    }

    /// Calls a tool whose result is a list; returns the items (checked against the text content).
    pub async fn list_ok(&self, tool: &str, args: Value) -> Vec<Value> {
        let result = self.call(tool, args).await;
        assert_ne!(result.is_error, Some(true), "{tool} failed: {}", text(&result));
        let structured = result.structured_content.clone().expect("structured content");
        let items =
            structured["result"].as_array().unwrap_or_else(|| panic!("{tool}: no list in {structured}")).clone();
        if items.is_empty() {
            assert!(result.content.is_empty(), "an empty list has no text content");
        } else {
            let from_text: Value = serde_json::from_str(&text(&result)).expect("text is JSON");
            assert_eq!(from_text, Value::Array(items.clone()), "text and structuredContent differ");
        }
        items
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

/// A `.deepreview` rule `md` ("Markdown") over the markdown files `include` matches, reviewed with `strategy` and
/// `instructions`.
pub fn md_rule(include: &str, strategy: &str, instructions: &str) -> String {
    format!(
        "md:\n  description: Markdown\n  match:\n    include: [\"{include}\"]\n  review:\n    strategy: {strategy}\n    \
         instructions: {instructions}\n"
    )
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

/// The events of a server-sent event stream (the legacy SSE transport's `GET /sse`).
pub struct Events {
    body: std::pin::Pin<Box<dyn futures::Stream<Item = reqwest::Result<Vec<u8>>> + Send>>,
    buffer: String,
}

impl Events {
    /// The events of `response`'s body.
    pub fn of(response: reqwest::Response) -> Events {
        use futures::StreamExt;
        Events { body: Box::pin(response.bytes_stream().map(|chunk| chunk.map(|b| b.to_vec()))), buffer: String::new() }
    }

    /// The next event's name and data, or None once the server ends the stream.
    pub async fn next(&mut self) -> Option<(String, String)> {
        use futures::StreamExt;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut name = String::new();
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        name = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                if !name.is_empty() {
                    return Some((name, data));
                }
                continue;
            }
            let chunk = self.body.next().await?.ok()?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

/// A raw JSON-RPC `initialize` request (id 1) for protocol `version`.
pub fn initialize_request(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
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

/// One review task of the `claude` task list: a `description:` line and TAB-indented `subagent_type:` and `prompt:`.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTask {
    /// After `description: `.
    pub description: String,
    /// After `subagent_type: `.
    pub agent: String,
    /// The instruction file path after `prompt: "@`.
    pub prompt: String,
}

impl ListedTask {
    /// The review id: the instruction file's name without `.md`.
    pub fn id(&self) -> String {
        let name = self.prompt.rsplit('/').next().unwrap();
        name.strip_suffix(".md").unwrap_or_else(|| panic!("prompt is not a .md file: {}", self.prompt)).to_owned()
    }
}

/// The tasks of a `claude`-format review list (as returned by `get_review_instructions` or inside `needs_work`
/// feedback), checking each block's shape.
pub fn listed_tasks(text: &str) -> Vec<ListedTask> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut tasks = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(description) = line.strip_prefix("description: ") else { continue };
        let agent = lines.get(i + 1).and_then(|l| l.strip_prefix("\tsubagent_type: "));
        let prompt = lines.get(i + 2).and_then(|l| l.strip_prefix("\tprompt: \"@")).and_then(|l| l.strip_suffix('"'));
        let (Some(agent), Some(prompt)) = (agent, prompt) else {
            panic!("malformed task block at line {i} of\n{text}")
        };
        assert_eq!(lines.get(i + 3), Some(&""), "each task block ends with an empty line in\n{text}");
        tasks.push(ListedTask {
            description: description.to_owned(),
            agent: agent.to_owned(),
            prompt: prompt.to_owned(),
        });
    }
    tasks
}

/// The descriptions of `tasks`, for comparing with a list of expected ones.
pub fn descriptions(tasks: &[ListedTask]) -> Vec<&str> {
    tasks.iter().map(|t| t.description.as_str()).collect()
}

/// The review ids of `tasks`.
pub fn ids(tasks: &[ListedTask]) -> Vec<String> {
    tasks.iter().map(ListedTask::id).collect()
}

/// The two fixed lines that open every `claude` task list.
pub const TASK_LIST_HEADER: &str = "Invoke the following list of Agents in parallel.\nIMPORTANT: Do NOT read the prompt \
files yourself. Pass the prompt field directly to each agent \u{2014} the @file references are expanded automatically.\n\n";

impl Project {
    /// The review instruction directory of a project whose root is `rel` below the project directory (`""` for the
    /// directory itself).
    pub fn review_dir(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel).join(".deepwork/tmp/review_instructions")
    }

    /// The text of the instruction file of review `id` in the project directory.
    pub fn instructions(&self, id: &str) -> String {
        let path = self.review_dir("").join(format!("{id}.md"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// Names in the review instruction directory, sorted.
    pub fn review_files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.review_dir(""))
            .map(|entries| entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        names.sort();
        names
    }
}
