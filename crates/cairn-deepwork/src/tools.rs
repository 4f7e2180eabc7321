//! The MCP adapter: the deepwork tools, one file each, and the server that lists and dispatches them.
//!
//! A tool parses its arguments, resolves the project root for this call, runs one facade operation on a blocking
//! thread (file locks and file I/O), and wraps the outcome in DeepWork's envelopes: a result object (plus
//! `issue_detected` while some job fails to load), a soft `{"error": ...}` object, or an `isError` result
//! `Error calling tool '<tool>': <message>`. This is the only module that knows rmcp.

mod abort_workflow;
mod finished_step;
mod get_configured_reviews;
mod get_named_schemas;
mod get_review_instructions;
mod get_session_job;
mod get_workflows;
mod go_to_step;
mod mark_review_as_passed;
mod register_session_job;
mod start_workflow;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_mcp::access::{Denied, Scope};
use cairn_mcp::registry::{Registry, Surface, ToolEntry};
use cairn_mcp::{envelope, roots};
use rmcp::model::{
    CallToolResult, Implementation,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::arguments;
use crate::platform_text;
use crate::service::{Deepwork, Error};

/// Where each call's project root comes from.
#[derive(Debug, Clone)]
pub enum RootSource {
    /// `--path`: always this directory.
    Fixed(PathBuf),
    /// No `--path`: the client's first `file:` root, asked on every call, else the launch directory.
    ClientRoots {
        /// The launch directory.
        fallback: PathBuf,
    },
}

/// What a tool that only reads needs.
const READ: &[Scope] = &[Scope::DeepworkRead];
/// What a tool that changes session state or writes review files needs.
const WRITE: &[Scope] = &[Scope::DeepworkWrite];

/// A [`ToolEntry`] for the tool module `$tool` needing `$needs`, worded for `$platform`.
macro_rules! tool {
    ($tool:ident, $needs:expr, $platform:expr) => {
        ToolEntry {
            tool: for_host($tool::tool(), $platform),
            needs: $needs,
            call: |server, call| Box::pin($tool::call(server, call.args, call.context)),
        }
    };
}

/// `tool` as `platform` should read it (Claude Code's wording replaced for other hosts).
fn for_host(tool: Tool, platform: &str) -> Tool {
    if !platform_text::rewords_tools(platform) {
        return tool;
    }
    let mut value = serde_json::to_value(&tool).expect("tools serialize");
    platform_text::reword(&mut value);
    serde_json::from_value(value).expect("a reworded tool is still a tool")
}

/// The deepwork MCP server: the tool list and dispatch over a [`Deepwork`] service.
#[derive(Debug, Clone)]
pub struct DeepworkServer {
    service: Deepwork,
    roots: RootSource,
    instructions: Arc<str>,
    registry: Arc<Registry<DeepworkServer>>,
}

impl DeepworkServer {
    /// A server for `service`, taking roots from `roots`. Prepares the startup project (`.deepwork/tmp`).
    pub fn new(service: Deepwork, roots: RootSource) -> Self {
        let startup_root = match &roots {
            RootSource::Fixed(root) => root.clone(),
            RootSource::ClientRoots { fallback } => fallback.clone(),
        };
        service.prepare_project(&startup_root);
        let instructions = service.server_instructions(&startup_root).into();
        let platform = service.config().platform.as_str();
        let registry = Arc::new(Registry::new(vec![
            tool!(get_workflows, READ, platform),
            tool!(start_workflow, WRITE, platform),
            tool!(finished_step, WRITE, platform),
            tool!(abort_workflow, WRITE, platform),
            tool!(go_to_step, WRITE, platform),
            tool!(register_session_job, WRITE, platform),
            tool!(get_session_job, READ, platform),
            tool!(get_named_schemas, READ, platform),
            tool!(get_review_instructions, WRITE, platform),
            tool!(get_configured_reviews, READ, platform),
            tool!(mark_review_as_passed, WRITE, platform),
        ]));
        DeepworkServer { service, roots, instructions, registry }
    }

    /// The project root for this call.
    async fn root(&self, context: &RequestContext<RoleServer>) -> PathBuf {
        let root = match &self.roots {
            RootSource::Fixed(root) => return root.clone(),
            RootSource::ClientRoots { fallback } => {
                roots::first_file_root(context).await.unwrap_or_else(|| fallback.clone())
            }
        };
        self.service.prepare_project(&root);
        root
    }

    /// Runs `operation` against this call's root on a blocking thread (file locks and file I/O).
    async fn on_root<T, F>(&self, context: &RequestContext<RoleServer>, operation: F) -> Result<T, String>
    where
        T: Send + 'static,
        F: FnOnce(&Deepwork, &Path) -> T + Send + 'static,
    {
        let root = self.root(context).await;
        let service = self.service.clone();
        tokio::task::spawn_blocking(move || operation(&service, &root)).await.map_err(|err| format!("internal error: {err}"))
    }

    /// Runs a workflow operation on a blocking thread (file locks and file I/O) and wraps its outcome for `tool`
    /// ([`wrap`]).
    async fn run<T, F>(&self, tool: &str, context: &RequestContext<RoleServer>, operation: F) -> CallToolResult
    where
        T: Serialize + Send + 'static,
        F: FnOnce(&Deepwork, &Path) -> Result<T, Error> + Send + 'static,
    {
        let outcome = self
            .on_root(context, move |service, root| (operation(service, root), service.issue_detected(root)))
            .await;
        match outcome {
            Ok((outcome, issue)) => wrap(tool, outcome, issue),
            Err(err) => envelope::error(format!("Error calling tool '{tool}': {err}")),
        }
    }

    /// [`DeepworkServer::run`] for a quick read that stays on this thread: a few `stat`s and a directory listing
    /// cost less than the hand-off to a blocking thread and back (`get_workflows`; docs/benchmarks.md). The operation
    /// gives its outcome and the `issue_detected` text it found on the way.
    async fn run_here<T, F>(&self, tool: &str, context: &RequestContext<RoleServer>, operation: F) -> CallToolResult
    where
        T: Serialize,
        F: FnOnce(&Deepwork, &Path) -> (Result<T, Error>, Option<String>),
    {
        let root = self.root(context).await;
        let (outcome, issue) = operation(&self.service, &root);
        wrap(tool, outcome, issue)
    }

    /// Runs an operation whose result is one string (the review tools).
    async fn run_text<F>(&self, tool: &str, context: &RequestContext<RoleServer>, operation: F) -> CallToolResult
    where
        F: FnOnce(&Deepwork, &Path) -> String + Send + 'static,
    {
        match self.on_root(context, operation).await {
            Ok(text) => envelope::text(text),
            Err(err) => envelope::error(format!("Error calling tool '{tool}': {err}")),
        }
    }

    /// Runs an operation whose result is a list (the review tools).
    async fn run_list<T, F>(&self, tool: &str, context: &RequestContext<RoleServer>, operation: F) -> CallToolResult
    where
        T: Serialize + Send + 'static,
        F: FnOnce(&Deepwork, &Path) -> Vec<T> + Send + 'static,
    {
        match self.on_root(context, operation).await {
            Ok(items) => envelope::list(items.into_iter().map(|i| serde_json::to_value(i).expect("items serialize")).collect()),
            Err(err) => envelope::error(format!("Error calling tool '{tool}': {err}")),
        }
    }
}

/// A workflow operation's outcome for `tool`: a result object (plus `issue_detected` while some job fails to load), a
/// soft `{"error": …}` object, or an `isError` result.
fn wrap<T: Serialize>(tool: &str, outcome: Result<T, Error>, issue: Option<String>) -> CallToolResult {
    match outcome {
        Ok(value) => {
            let value = serde_json::to_value(value).expect("tool results serialize");
            envelope::object(with_issue(value, issue))
        }
        Err(Error::Soft(message)) => {
            let issue = issue.filter(|_| !message.starts_with("session_id is required"));
            envelope::object(with_issue(serde_json::json!({ "error": message }), issue))
        }
        Err(Error::Failed(message)) => envelope::error(format!("Error calling tool '{tool}': {message}")),
    }
}

fn with_issue(mut value: Value, issue: Option<String>) -> Value {
    if let (Some(issue), Value::Object(map)) = (issue, &mut value) {
        map.insert("issue_detected".into(), Value::String(issue));
    }
    value
}

/// Describes a tool whose arguments are `P` and whose result is an object.
fn object_tool<P: JsonSchema>(name: &'static str, description: &'static str) -> Tool {
    cairn_mcp::describe::pydantic_tool::<P>(name, description, envelope::object_schema())
}

/// Describes a tool whose result is `{"result": [item, …]}`.
fn list_tool<P: JsonSchema>(name: &'static str, description: &'static str, item: Value) -> Tool {
    cairn_mcp::describe::pydantic_tool::<P>(name, description, envelope::wrapped_schema(serde_json::json!({"type": "array", "items": item})))
}

/// Describes a tool whose result is `{"result": "<text>"}`.
fn text_tool<P: JsonSchema>(name: &'static str, description: &'static str) -> Tool {
    cairn_mcp::describe::pydantic_tool::<P>(name, description, envelope::wrapped_schema(serde_json::json!({"type": "string"})))
}

impl cairn_mcp::Handler for DeepworkServer {
    fn get_info(&self) -> ServerConfig {
        // Prompts and resources are declared (and empty), as DeepWork does, so clients that list them get an answer.
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_prompts().enable_resources().build())
            .with_server_info(Implementation::new("deepwork", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions.to_string())
    }

    cairn_mcp::registry_handlers!();
}

impl Surface for DeepworkServer {
    const NAME: &'static str = "deepwork";

    fn registry(&self) -> &Registry<Self> {
        &self.registry
    }

    fn unknown_tool(&self, name: &str) -> Result<CallToolResult, ErrorData> {
        Ok(envelope::error(format!("Unknown tool: '{name}'")))
    }

    fn refused(&self, denied: &Denied) -> CallToolResult {
        envelope::error(format!("Error calling tool '{}': insufficient_scope: {denied}", denied.what))
    }
}
