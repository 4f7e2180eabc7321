//! The MCP adapter: the roscoe tools (authoring, runs, skill import, docs), one file each, and the server that lists
//! and dispatches them.
//!
//! A tool parses its arguments, resolves the call's [`Scope`] from `cwd` / `global` within the server's [`Reach`]
//! (any folder over stdio; on `cairn serve`, its projects), runs one [`Service`] operation on
//! a blocking thread (git and file I/O), and wraps the outcome. Envelopes (seed "MCP tools reference" and §13):
//! - success: the result's JSON as the text item and as `structuredContent` (an array result, `list_workflows`, is
//!   `structuredContent: { result: [...] }`, since structured content must be an object);
//! - any error — scope (`CWD_REQUIRED`, `CWD_GLOBAL_CONFLICT`, `CWD_INVALID`), writer (`WriterErrorCode`) or bad
//!   arguments (`invalid_input`) — is `isError: true` with the seed's `{ error, code, … }` object, again as text and
//!   as `structuredContent`;
//! - an invalid *workflow* given to `validate_workflow` / `lint_workflow` is a normal result (the tool worked);
//! - a `rename_workflow` that rolled back is `isError: true` with its full result (`rolledBack: true`, `code`);
//! - the run tools (seed: `isError` only for server failures) answer user errors — `Run not found.`, `stale_step`,
//!   `wrong_tool`, … — as a normal result `{ error, code }`, and `test_workflow` its `{ ok: false, code, message }`;
//!   their scope errors and bad arguments are `isError` like every tool's.
//!
//! This is the only module of the crate that knows rmcp; it holds no state beyond the service and the tool list.

mod advance_consensus;
mod advance_map;
mod advance_round_robin;
mod advance_run;
mod answer_docs;
mod ask_docs;
mod cancel_run;
mod convert_skill;
mod create_workflow;
mod delete_workflow;
mod duplicate_workflow;
mod finalize_skill_conversion;
mod fork_run;
mod get_doc;
mod get_run_history;
mod get_run_status;
mod get_workflow;
mod get_workflow_diagram;
mod get_workflow_schema;
mod lint_workflow;
mod list_docs;
mod list_runs;
mod list_skills;
mod list_workflow_references;
mod list_workflows;
mod move_workflow;
mod rename_workflow;
mod resume_run;
mod retry_run;
mod set_run_budget;
mod search_docs;
mod start_workflow;
mod test_workflow;
mod update_workflow;
mod validate_workflow;

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use cairn_mcp::access::{Access, Denied, Scope as Needs};
use cairn_mcp::elicit::{Answered, Asker, Question};
use cairn_mcp::envelope;
use cairn_mcp::registry::{Call, Registry, Surface, ToolEntry};
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation,
    JsonObject, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Value, json};

use crate::actor::Actor;
use crate::brief;
use crate::engine::{Answer, PendingStep};
use crate::error::Error;
use crate::reach::Reach;
use crate::runs::{AskPerson, Runs};
use crate::scope::Scope;
use crate::service::{Body, Service};
use crate::source::Source;
use crate::tool_groups::{self, ToolGroups};
pub(crate) use crate::tool_args::{
    BodyWrite, BudgetArg, DetailArg, ExecutionArg, ScopeArgs, SourceArg, answer_params, body_params, docs_params, run_params,
    scoped_params, source, subject_params,
};

const INSTRUCTIONS: &str = "Roscoe workflow authoring: state-machine workflows in YAML, stored per project \
(<git root>/.roscoe/workflows/<id>.yaml, the repo source) or for the user ($CAIRN_HOME/workflows/<id>.yaml, the global \
source; a repo workflow shadows a global one with the same id). Every tool except the docs tools needs a scope: pass \
`cwd` (the absolute path you are working in) or `global: true`, never both. Before writing a workflow call get_workflow_schema once; check \
drafts with validate_workflow / lint_workflow; picture one with get_workflow_diagram. Call list_workflow_references \
before delete_workflow or rename_workflow. Turn a SKILL.md into a workflow with list_skills, convert_skill and \
finalize_skill_conversion. Questions about cairn itself: search_docs, ask_docs, answer_docs. Run a workflow with \
start_workflow and answer each `pendingStep` with the tool for its nodeType (ai_agent / ai_judge: advance_run; \
consensus: advance_consensus; round_robin: advance_round_robin; map: advance_map); a human step must be shown to the \
user with its validTransitions as a numbered list, and resume_run called only with the user's own choice — never \
autonomously. Check a workflow on mocks with test_workflow. Errors are JSON `{ error, code }`: branch on `code`. \
Every tool's arguments, answers and error codes in detail: get_doc reference/mcp-tools.";

/// What a tool that only reads needs.
const READ: &[Needs] = &[Needs::RoscoeRead];
/// What a tool that writes workflow files needs (a workflow with a `script` node needs `roscoe:exec` too).
const WRITE: &[Needs] = &[Needs::RoscoeWrite];
/// What a tool that starts or moves runs needs (starting one that runs scripts needs `roscoe:exec` too).
const RUN: &[Needs] = &[Needs::RoscoeRun];

/// A [`ToolEntry`] for the tool module `$tool` needing `$needs`; its handler takes the arguments (`args`) or the
/// whole [`registry::Call`] (`call`).
macro_rules! tool {
    ($tool:ident, $needs:expr, args) => {
        ToolEntry { tool: $tool::tool(), needs: $needs, call: |server, call| Box::pin($tool::call(server, call.args)) }
    };
    ($tool:ident, $needs:expr, call) => {
        ToolEntry { tool: $tool::tool(), needs: $needs, call: |server, call| Box::pin($tool::call(server, call)) }
    };
    // A call that may take long: progress notifications when the client asks (`run_progress.rs`).
    ($tool:ident, $needs:expr, $kind:ident, progress) => {
        ToolEntry {
            tool: $tool::tool(),
            needs: $needs,
            call: |server, call| {
                let progress = cairn_mcp::progress::Progress::of(&call);
                let call = tool!(@call $tool, $kind, server, call);
                Box::pin(crate::run_progress::RunProgress::around(progress, &server.runs, call))
            },
        }
    };
    (@call $tool:ident, args, $server:ident, $call:ident) => { $tool::call($server, $call.args) };
    (@call $tool:ident, call, $server:ident, $call:ident) => { $tool::call($server, $call) };
}

/// The roscoe MCP server: the tool list and dispatch over a [`Service`] (workflows) and [`Runs`] (runs).
#[derive(Debug, Clone)]
pub struct RoscoeServer {
    service: Service,
    runs: Runs,
    /// The folders callers may name.
    reach: Reach,
    /// The tools it offers (`--tools`; over HTTP a request's `?tools=` wins).
    groups: ToolGroups,
    /// Whether this session's answers already said `urlNote` (it comes once, see `brief`).
    url_note_shown: Arc<AtomicBool>,
    registry: Arc<Registry<RoscoeServer>>,
}

impl RoscoeServer {
    /// A server over `service` (whose home holds the global source and `roscoe.yaml`) and `runs` (the database),
    /// whose callers may name any folder (stdio: the local user).
    pub fn new(service: Service, runs: Runs) -> Self {
        let registry = Arc::new(Registry::new(entries()));
        let url_note_shown = Arc::new(AtomicBool::new(false));
        RoscoeServer { service, runs, reach: Reach::Anywhere, groups: ToolGroups::all(), url_note_shown, registry }
    }

    /// This server offering only the tools of `groups` (`roscoe mcp --tools`).
    pub fn offering(mut self, groups: ToolGroups) -> Self {
        self.groups = groups;
        self
    }

    /// This server with its callers confined to `reach` (`cairn serve`: its projects and global scope).
    pub fn within(mut self, reach: Reach) -> Self {
        self.reach = reach;
        self
    }

    /// Resolves the scope and runs `operation` on a blocking thread; the result or the `isError` error object.
    async fn run<T, F>(&self, scope: ScopeArgs, operation: F) -> CallToolResult
    where
        T: Serialize + Send + 'static,
        F: FnOnce(&Service, &Scope) -> Result<T, Error> + Send + 'static,
    {
        match self.on_scope(scope, operation).await {
            Ok((value, _)) => success(value),
            Err(body) => failure(body),
        }
    }

    /// [`RoscoeServer::run`] for a workflow write by the caller of `access`: the operation gets its [`Actor`], and
    /// a write that succeeded is recorded as `action` on workflow `id`.
    async fn write<T, F>(&self, access: &Access, action: &'static str, id: &str, scope: ScopeArgs, operation: F) -> CallToolResult
    where
        T: Serialize + Send + 'static,
        F: FnOnce(&Service, &Scope, &Actor) -> Result<T, Error> + Send + 'static,
    {
        let actor = actor(access);
        let acting = actor.clone();
        match self.on_scope(scope, move |service, scope| operation(service, scope, &acting)).await {
            Ok((value, scope)) => {
                let subject = crate::runs::workflow_subject(&scope, id);
                let changed = value.get("ok") != Some(&Value::Bool(false)) && value.get("rolledBack") != Some(&Value::Bool(true));
                if changed && let Err(error) = self.runs.record(&actor, action, &subject, json!({})).await {
                    tracing::warn!("{action} of workflow '{id}' succeeded but could not be recorded: {error}");
                }
                if changed && let Some(path) = value.get("path").and_then(Value::as_str) {
                    let written = value.get("id").and_then(Value::as_str).unwrap_or(id);
                    self.runs.approve_saved(&scope, written, Path::new(path), &actor).await;
                }
                success(value)
            }
            Err(body) => failure(body),
        }
    }

    /// Resolves the scope and runs `operation` on a blocking thread: its result as JSON and the scope, or the error
    /// object.
    async fn on_scope<T, F>(&self, scope: ScopeArgs, operation: F) -> Result<(Value, Scope), Value>
    where
        T: Serialize + Send + 'static,
        F: FnOnce(&Service, &Scope) -> Result<T, Error> + Send + 'static,
    {
        let (service, reach) = (self.service.clone(), self.reach.clone());
        let outcome = tokio::task::spawn_blocking(move || {
            let scope = reach.resolve(scope.cwd.as_deref(), scope.global)?;
            operation(&service, &scope).map(|value| (value, scope))
        })
        .await;
        match outcome {
            Ok(Ok((value, scope))) => Ok((serde_json::to_value(value).expect("tool results serialize"), scope)),
            Ok(Err(error)) => Err(error.body()),
            Err(join) => Err(json!({ "error": format!("internal error: {join}"), "code": "internal" })),
        }
    }
}

impl RoscoeServer {
    /// `create_workflow` / `update_workflow`: parses `call`'s arguments as `P`, then writes the workflow they give
    /// with `operation`, recorded as `tool` by the caller.
    async fn write_body<P, T, F>(&self, tool: &'static str, call: Call<'_>, operation: F) -> CallToolResult
    where
        P: DeserializeOwned + Into<BodyWrite>,
        T: Serialize + Send + 'static,
        F: FnOnce(&Service, &Scope, &str, &Body, Option<Source>, &Actor) -> Result<T, Error> + Send + 'static,
    {
        let write: BodyWrite = match parse::<P>(tool, call.args) {
            Ok(params) => params.into(),
            Err(error) => return error,
        };
        let id = write.id.clone();
        self.write(call.access, tool, &id, write.scope, move |service, scope, actor| {
            let body = Body::from_inputs(write.config, write.yaml)?;
            operation(service, scope, &write.id, &body, write.source, actor)
        })
        .await
    }

    /// Answers the pending step of run `run_id` with `answer`; with `node_id`, only while that node is the one
    /// pending (`stale_step` otherwise).
    /// Then, for a run started with `ask_person`, the human steps it reaches go to the person ([`FormAsker`]).
    async fn advance(
        &self,
        call: &Call<'_>,
        scope: ScopeArgs,
        run_id: String,
        node_id: Option<String>,
        answer: Answer,
    ) -> CallToolResult {
        let (asker, actor) = (FormAsker::of(call.context), actor(call.access));
        self.run_tree(scope, move |runs, scope| async move {
            let result = runs.advance(&scope, &run_id, node_id, answer).await?;
            runs.ask_person(&scope, result, asker.as_ref(), &actor).await
        })
        .await
    }

    /// [`run_runs`](Self::run_runs) for a tool that answers the AdvanceResult, made brief for this session.
    async fn run_tree<T, F, Fut>(&self, scope: ScopeArgs, operation: F) -> CallToolResult
    where
        T: Serialize,
        F: FnOnce(Runs, Scope) -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let result = self.run_runs(scope, operation).await;
        reshaped(result, |value| brief::advance_result(value, &self.url_note_shown))
    }
}

/// A run's human steps asked through the calling client's form (MCP elicitation), for runs started with
/// `ask_person` ([`Runs::ask_person`]): the step's question, its choices by their labels, a comment unless the node
/// forbids one.
pub(crate) struct FormAsker(Asker);

impl FormAsker {
    /// The asker of the client of request `context`, when it can show a form.
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Option<FormAsker> {
        Asker::of(context).map(FormAsker)
    }
}

impl AskPerson for FormAsker {
    async fn ask(&self, step: &PendingStep) -> Result<(String, Option<String>), String> {
        let label = |event: &str| step.transitions.iter().find(|t| t.event == event).and_then(|t| t.label.clone());
        let choices =
            step.valid_transitions.iter().map(|e| (e.clone(), label(e).unwrap_or_else(|| e.clone()))).collect();
        let message = step.prompt.split("\n\nOptions:\n").next().unwrap_or_default().to_owned();
        let question = Question { message, choices, comment: step.allow_comment != Some(false) };
        match self.0.ask(&question).await {
            Answered::Chose { choice, comment } => Ok((choice, comment)),
            Answered::Nothing(why) => Err(why),
        }
    }
}

/// Every roscoe tool with what it needs, in `tools/list` order.
pub(crate) fn entries() -> Vec<ToolEntry<RoscoeServer>> {
    vec![
        tool!(list_workflows, READ, args),
        tool!(get_workflow, READ, args),
        tool!(create_workflow, WRITE, call),
        tool!(update_workflow, WRITE, call),
        tool!(delete_workflow, WRITE, call),
        tool!(list_workflow_references, READ, args),
        tool!(move_workflow, WRITE, call),
        tool!(duplicate_workflow, WRITE, call),
        tool!(rename_workflow, WRITE, call),
        tool!(get_workflow_schema, READ, args),
        tool!(validate_workflow, READ, args),
        tool!(lint_workflow, READ, args),
        tool!(get_workflow_diagram, READ, args),
        tool!(start_workflow, RUN, call, progress),
        tool!(get_run_status, READ, args),
        tool!(advance_run, RUN, call, progress),
        tool!(advance_consensus, RUN, call, progress),
        tool!(advance_round_robin, RUN, call, progress),
        tool!(advance_map, RUN, call, progress),
        tool!(resume_run, RUN, call, progress),
        tool!(cancel_run, RUN, call),
        tool!(retry_run, RUN, call, progress),
        tool!(fork_run, RUN, call, progress),
        tool!(set_run_budget, RUN, call),
        tool!(list_runs, READ, args),
        tool!(get_run_history, READ, args),
        tool!(test_workflow, RUN, call, progress),
        tool!(list_skills, READ, args),
        tool!(convert_skill, READ, args),
        tool!(finalize_skill_conversion, WRITE, call),
        tool!(list_docs, READ, args),
        tool!(get_doc, READ, args),
        tool!(search_docs, READ, args),
        tool!(ask_docs, READ, args),
        tool!(answer_docs, READ, args),
    ]
}

/// The [`Actor`] of a call by `access` over MCP.
fn actor(access: &Access) -> Actor {
    Actor {
        via: "mcp",
        principal_id: access.principal_id.clone(),
        name: access.name.clone(),
        may_exec: access.holds(Needs::RoscoeExec),
    }
}

impl RoscoeServer {
    /// Resolves the scope (on a blocking thread: it may ask git) and awaits a run operation. Run tools report user
    /// errors (`Run not found.`, `stale_step`, …) as a normal result `{ error, code }` (seed: `isError` only for
    /// server failures); scope errors, bad arguments and server failures are `isError`.
    async fn run_runs<T, F, Fut>(&self, scope: ScopeArgs, operation: F) -> CallToolResult
    where
        T: Serialize,
        F: FnOnce(Runs, Scope) -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let reach = self.reach.clone();
        let resolved = tokio::task::spawn_blocking(move || reach.resolve(scope.cwd.as_deref(), scope.global)).await;
        let scope = match resolved {
            Ok(Ok(scope)) => scope,
            Ok(Err(error)) => return failure(error.body()),
            Err(join) => return failure(json!({ "error": format!("internal error: {join}"), "code": "internal" })),
        };
        match operation(self.runs.clone(), scope).await {
            Ok(value) => success(serde_json::to_value(value).expect("run results serialize")),
            Err(error) if error.is_internal() => failure(error.body()),
            Err(error) => success(error.body()),
        }
    }
}

/// Parses `arguments` into `P`, or the `invalid_input` error result. Top-level camelCase names are read as their
/// snake_case spelling (`newId` → `new_id`, spec §13 conventions); giving both spellings of one name is an error.
#[allow(
    clippy::result_large_err,
    reason = "the error is the tool's reply, returned at once"
)]
fn parse<P: DeserializeOwned>(
    tool: &str,
    arguments: Option<JsonObject>,
) -> Result<P, CallToolResult> {
    let invalid = |message: String| {
        failure(json!({
            "error": format!(
                "invalid arguments for tool '{tool}': {message}; check the tool's input schema (tools/list) and call it again"
            ),
            "code": "invalid_input",
        }))
    };
    let mut normalized = JsonObject::new();
    for (name, value) in arguments.unwrap_or_default() {
        let snake = snake_case(&name);
        if normalized.contains_key(&snake) {
            return Err(invalid(format!("`{snake}` is given twice (as `{snake}` and in camelCase); keep one")));
        }
        normalized.insert(snake, value);
    }
    serde_json::from_value(Value::Object(normalized)).map_err(|err| invalid(err.to_string()))
}

/// `runId` → `run_id`; names without capitals are returned as they are.
fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A successful result: `value` as text and as structured content (arrays wrapped as `{ result }`).
fn success(value: Value) -> CallToolResult {
    let text = serde_json::to_string(&value).expect("a Value serializes");
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(match value {
        Value::Array(_) => json!({ "result": value }),
        other => other,
    });
    result
}

/// A successful `result` with its structured content changed by `change` (and its text made again from it); an
/// `isError` result as it is.
fn reshaped(mut result: CallToolResult, change: impl FnOnce(&mut Value)) -> CallToolResult {
    if result.is_error == Some(true) {
        return result;
    }
    match result.structured_content.take() {
        Some(mut value) => {
            change(&mut value);
            success(value)
        }
        None => result,
    }
}

/// An `isError` result carrying the error object as text and as structured content.
fn failure(body: Value) -> CallToolResult {
    let text = serde_json::to_string(&body).expect("a Value serializes");
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = Some(body);
    result
}

/// A skill-import result whose `ok` is `false` (a failed stage) becomes an `isError` result; others pass through.
fn staged(mut result: CallToolResult) -> CallToolResult {
    if result
        .structured_content
        .as_ref()
        .is_some_and(|body| body.get("ok") == Some(&Value::Bool(false)))
    {
        result.is_error = Some(true);
    }
    result
}

/// A docs tool's outcome: the result, or its `{ error, code }` as an `isError` result.
fn docs_result<T: Serialize>(outcome: Result<T, Error>) -> CallToolResult {
    match outcome {
        Ok(value) => success(serde_json::to_value(value).expect("docs results serialize")),
        Err(error) => failure(error.body()),
    }
}

/// Describes a tool whose arguments are `P`. It declares no output schema: the description says what the result holds
/// (arrays come as `{ result: [...] }`), and a schema would cost every request's context more than it tells.
fn object_tool<P: JsonSchema>(name: &'static str, description: &'static str) -> Tool {
    let mut tool = cairn_mcp::describe::tool::<P>(name, description, envelope::object_schema());
    tool.output_schema = None;
    tool
}

impl cairn_mcp::Handler for RoscoeServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("roscoe", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS.to_owned())
    }

    cairn_mcp::registry_handlers!();
}

impl Surface for RoscoeServer {
    const NAME: &'static str = "roscoe";

    fn registry(&self) -> &Registry<Self> {
        &self.registry
    }

    fn offers(&self, context: &RequestContext<RoleServer>, name: &str) -> bool {
        let query = context.extensions.get::<http::request::Parts>().and_then(|parts| parts.uri.query());
        match query.and_then(tool_groups::requested) {
            Some(Ok(groups)) => groups.offers(name),
            Some(Err(_)) => false,
            None => self.groups.offers(name),
        }
    }

    fn unknown_tool(&self, name: &str) -> Result<CallToolResult, ErrorData> {
        Ok(envelope::error(format!("Unknown tool: '{name}'. Call tools/list to see the roscoe tools.")))
    }

    fn refused(&self, denied: &Denied) -> CallToolResult {
        failure(json!({ "error": format!("{denied}; ask for a token that has them"), "code": "insufficient_scope" }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[tokio::test]
    async fn every_tool_is_in_a_tool_group() {
        let home = tempfile::tempdir().unwrap();
        let store = cairn_store::Store::open(&cairn_store::Store::default_url(home.path())).await.unwrap();
        let service = Service::new(home.path());
        let server = RoscoeServer::new(service.clone(), Runs::new(store, service));
        let groups = ToolGroups::parse("runs,authoring,skills,docs").unwrap();
        for tool in server.registry.entries().iter().map(|e| &e.tool) {
            assert!(groups.offers(&tool.name), "{} belongs to no group of tool_groups.rs", tool.name);
        }
    }

    #[tokio::test]
    async fn every_tool_but_the_docs_tools_takes_the_scope() {
        let home = tempfile::tempdir().unwrap();
        let store = cairn_store::Store::open(&cairn_store::Store::default_url(home.path())).await.unwrap();
        let service = Service::new(home.path());
        let server = RoscoeServer::new(service.clone(), Runs::new(store, service));
        let docs = ["list_docs", "get_doc", "search_docs", "ask_docs", "answer_docs"];
        for tool in server.registry.entries().iter().map(|e| &e.tool) {
            let props = tool.input_schema.get("properties").and_then(Value::as_object);
            if docs.contains(&tool.name.as_ref()) {
                assert!(props.is_none_or(|p| !p.contains_key("cwd") && !p.contains_key("global")), "{}", tool.name);
                continue;
            }
            let props = props.unwrap_or_else(|| panic!("{}: no properties", tool.name));
            assert!(
                props.contains_key("cwd") && props.contains_key("global"),
                "{}",
                tool.name
            );
        }
    }

    #[test]
    fn camel_case_names_read_as_snake_case_but_not_twice() {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Rename {
            new_id: String,
            rewrite_references: Option<bool>,
        }
        let args = json!({"newId": "b", "rewriteReferences": false}).as_object().cloned();
        let params = parse::<Rename>("rename_workflow", args).unwrap();
        assert_eq!(params.new_id, "b");
        assert_eq!(params.rewrite_references, Some(false));
        let args = json!({"new_id": "b", "newId": "c"}).as_object().cloned();
        let err = parse::<Rename>("rename_workflow", args).unwrap_err();
        let body = err.structured_content.unwrap();
        assert_eq!(body["code"], "invalid_input");
        assert!(body["error"].as_str().unwrap().contains("`new_id` is given twice"), "{body}");
        assert_eq!(snake_case("timeoutMs"), "timeout_ms");
        assert_eq!(snake_case("already_snake"), "already_snake");
    }

    #[test]
    fn bad_arguments_are_invalid_input_errors() {
        let args = json!({"cwd": "/", "id": "x", "nope": 1})
            .as_object()
            .cloned();
        let err = parse::<get_workflow::Params>("t", args).unwrap_err();
        assert_eq!(err.is_error, Some(true));
        let body = err.structured_content.unwrap();
        assert_eq!(body["code"], "invalid_input");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("unknown field `nope`")
        );
    }
}
