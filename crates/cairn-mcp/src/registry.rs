//! One tool registry for every surface: each surface lists its tools once, as [`ToolEntry`]s (the `tools/list` entry,
//! the scopes it needs, the handler), and its [`Handler`](crate::Handler) hands `tools/list`, lookups and `tools/call`
//! to the [`Registry`]. The registry shows a caller only the tools its [`Access`] allows and refuses the others before
//! their handler runs, and offers only the tools the surface [`offers`](Surface::offers) (roscoe's tool groups); each
//! surface keeps its own result format through [`Surface`]. Every call runs in a `tool_call` span (surface, tool,
//! principal) and ends with one log line (outcome, duration) and its metrics (`cairn_tool_calls_total`,
//! `cairn_tool_call_duration_seconds`); its arguments are never logged. Arguments hosts add on their own are dropped
//! before the handler parses them ([`args::HOST_ADDED`]), and an error result keeps its structured content only where
//! it fits the tool's output schema ([`error_fit`](crate::error_fit)).

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, JsonObject, ListToolsResult, Tool};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use tracing::Instrument;

use crate::access::{Access, Denied, Scope};
use crate::args;
use crate::error_fit::OutputCheck;

/// What a tool handler returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = CallToolResult> + Send + 'a>>;

/// One call of a tool: its arguments, the request it came in, and who makes it.
#[derive(Debug)]
pub struct Call<'a> {
    /// The raw arguments.
    pub args: Option<JsonObject>,
    /// The MCP request (the client's info, roots, the HTTP request's parts).
    pub context: &'a RequestContext<RoleServer>,
    /// Who calls, holding the scopes the tool needs.
    pub access: &'a Access,
}

/// A tool of surface `S`.
pub struct ToolEntry<S> {
    /// Its `tools/list` entry.
    pub tool: Tool,
    /// The scopes a caller must hold to see and call it.
    pub needs: &'static [Scope],
    /// Its handler.
    pub call: for<'a> fn(&'a S, Call<'a>) -> ToolFuture<'a>,
}

impl<S> std::fmt::Debug for ToolEntry<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolEntry").field("tool", &self.tool.name).field("needs", &self.needs).finish()
    }
}

/// What a surface decides for itself: who calls, and how its refusals look.
pub trait Surface: Sized + Send + Sync + 'static {
    /// Its name in logs and metrics: `deepwork`, `roscoe` or `work`.
    const NAME: &'static str;

    /// The surface's tools.
    fn registry(&self) -> &Registry<Self>;

    /// Who makes a call ([`Access::of`] unless the surface knows better); `None` allows nothing.
    fn access(&self, context: &RequestContext<RoleServer>) -> Option<Access> {
        Access::of(context)
    }

    /// Whether it offers tool `name` to the request of `context` (every tool of its registry unless it says
    /// otherwise); a tool it does not offer is neither listed nor callable.
    fn offers(&self, _context: &RequestContext<RoleServer>, _name: &str) -> bool {
        true
    }

    /// The answer to a call of a tool it does not have.
    fn unknown_tool(&self, name: &str) -> Result<CallToolResult, ErrorData>;

    /// The answer to a call the caller lacks the scopes for.
    fn refused(&self, denied: &Denied) -> CallToolResult;
}

/// The tools of surface `S`, in `tools/list` order.
#[derive(Debug)]
pub struct Registry<S> {
    entries: Vec<ToolEntry<S>>,
    /// Each entry's output schema, to keep error results within it.
    checks: Vec<OutputCheck>,
}

impl<S: Surface> Registry<S> {
    /// A registry of `entries`; tool names must be unique.
    pub fn new(entries: Vec<ToolEntry<S>>) -> Self {
        for (i, entry) in entries.iter().enumerate() {
            assert!(
                entries[..i].iter().all(|e| e.tool.name != entry.tool.name),
                "tool '{}' is registered twice",
                entry.tool.name
            );
        }
        let checks = entries.iter().map(|_| OutputCheck::default()).collect();
        Registry { entries, checks }
    }

    /// Every entry.
    pub fn entries(&self) -> &[ToolEntry<S>] {
        &self.entries
    }

    /// The entry of tool `name`.
    pub fn entry(&self, name: &str) -> Option<&ToolEntry<S>> {
        self.entries.iter().find(|e| e.tool.name == name)
    }

    /// `tools/list`: the tools `access` may call.
    pub fn list(&self, access: Option<&Access>) -> ListToolsResult {
        let allowed = self
            .entries
            .iter()
            .filter(|e| access.is_some_and(|a| a.require("", e.needs).is_ok()))
            .map(|e| e.tool.clone())
            .collect();
        ListToolsResult::with_all_items(allowed)
    }

    /// The `tools/list` entry of tool `name`.
    pub fn get(&self, name: &str) -> Option<Tool> {
        self.entry(name).map(|e| e.tool.clone())
    }
}

/// `tools/list` of `server`, for the caller of `context`.
pub fn list_tools<S: Surface>(server: &S, context: &RequestContext<RoleServer>) -> ListToolsResult {
    let mut listed = server.registry().list(server.access(context).as_ref());
    listed.tools.retain(|tool| server.offers(context, &tool.name));
    listed
}

/// `tools/call` on `server`: the handler of the named tool, when the caller holds its scopes.
pub async fn call_tool<S: Surface>(
    server: &S,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let name = request.name.as_ref();
    let registry = server.registry();
    let offered = registry.entries.iter().position(|e| e.tool.name == name).filter(|_| server.offers(&context, name));
    let Some(index) = offered else {
        return server.unknown_tool(name).map(Into::into);
    };
    let entry = &registry.entries[index];
    let started = Instant::now();
    let access = server.access(&context);
    let principal = access.as_ref().map_or("nobody", |a| a.name.as_str());
    let span = tracing::info_span!("tool_call", surface = S::NAME, tool = name, principal = %principal);
    let (result, outcome) = match access.as_ref().map(|a| (a, a.require(name, entry.needs))) {
        None => {
            let denied = Denied { what: name.to_owned(), needed: entry.needs.to_vec(), has: Vec::new() };
            (server.refused(&denied), "refused")
        }
        Some((_, Err(denied))) => (server.refused(&denied), "refused"),
        Some((access, Ok(_))) => {
            let call = Call { args: args::without_host_added(request.arguments), context: &context, access };
            let result = (entry.call)(server, call).instrument(span.clone()).await;
            let outcome = if result.is_error == Some(true) { "error" } else { "ok" };
            (result, outcome)
        }
    };
    let elapsed = started.elapsed();
    cairn_telemetry::metrics::tool_call(S::NAME, name, outcome, elapsed);
    span.in_scope(|| tracing::info!(outcome, duration_ms = elapsed.as_secs_f64() * 1000.0, "tool call"));
    Ok(registry.checks[index].fit(&entry.tool, result).into())
}

/// The `tools/list`, tool lookup and `tools/call` methods of a [`Handler`](crate::Handler) impl, all handed to the
/// surface's [`Registry`] (through [`Surface`]): write `cairn_mcp::registry_handlers!();` inside the impl.
#[macro_export]
macro_rules! registry_handlers {
    () => {
        fn list_tools(
            &self,
            context: &rmcp::service::RequestContext<rmcp::RoleServer>,
        ) -> rmcp::model::ListToolsResult {
            $crate::registry::list_tools(self, context)
        }

        fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
            $crate::registry::Surface::registry(self).get(name)
        }

        fn call_tool(
            &self,
            request: rmcp::model::CallToolRequestParams,
            context: rmcp::service::RequestContext<rmcp::RoleServer>,
        ) -> $crate::CallFuture<'_> {
            Box::pin($crate::registry::call_tool(self, request, context))
        }
    };
}
