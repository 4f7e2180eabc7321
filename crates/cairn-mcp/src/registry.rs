//! One tool registry for every surface: each surface lists its tools once, as [`ToolEntry`]s (the `tools/list`
//! entry, the scopes it needs, the handler), and its `ServerHandler` hands `tools/list`, lookups and `tools/call` to
//! the [`Registry`]. The registry shows a caller only the tools its [`Access`] allows and refuses the others before
//! their handler runs; each surface keeps its own result format through [`Surface`].

use std::future::Future;
use std::pin::Pin;

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, JsonObject, ListToolsResult, Tool};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use crate::access::{Access, Denied, Scope};

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
    /// The surface's tools.
    fn registry(&self) -> &Registry<Self>;

    /// Who makes a call ([`Access::of`] unless the surface knows better); `None` allows nothing.
    fn access(&self, context: &RequestContext<RoleServer>) -> Option<Access> {
        Access::of(context)
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
        Registry { entries }
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
    server.registry().list(server.access(context).as_ref())
}

/// `tools/call` on `server`: the handler of the named tool, when the caller holds its scopes.
pub async fn call_tool<S: Surface>(
    server: &S,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let name = request.name.as_ref();
    let Some(entry) = server.registry().entry(name) else {
        return server.unknown_tool(name).map(Into::into);
    };
    let Some(access) = server.access(&context) else {
        let denied = Denied { what: name.to_owned(), needed: entry.needs.to_vec(), has: Vec::new() };
        return Ok(server.refused(&denied).into());
    };
    if let Err(denied) = access.require(name, entry.needs) {
        return Ok(server.refused(&denied).into());
    }
    let call = Call { args: request.arguments, context: &context, access: &access };
    Ok((entry.call)(server, call).await.into())
}

/// The `tools/list`, tool lookup and `tools/call` methods of an `rmcp::ServerHandler` impl, all handed to the
/// surface's [`Registry`] (through [`Surface`]): write `cairn_mcp::registry_handlers!();` inside the impl.
#[macro_export]
macro_rules! registry_handlers {
    () => {
        async fn list_tools(
            &self,
            _request: Option<rmcp::model::PaginatedRequestParams>,
            context: rmcp::service::RequestContext<rmcp::RoleServer>,
        ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
            Ok($crate::registry::list_tools(self, &context))
        }

        fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
            $crate::registry::Surface::registry(self).get(name)
        }

        async fn call_tool(
            &self,
            request: rmcp::model::CallToolRequestParams,
            context: rmcp::service::RequestContext<rmcp::RoleServer>,
        ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
            $crate::registry::call_tool(self, request, context).await
        }
    };
}
