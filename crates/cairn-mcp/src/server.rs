//! One rmcp handler for every surface, so the transports are compiled once.
//!
//! rmcp's serving code (the message loop, the Streamable HTTP service, their tasks) is generic over the handler type.
//! Given each surface's own type it would be generated again for each, in every crate that serves one (`cairn serve`
//! and the command line). Instead a surface implements [`Handler`], which is object safe, and the transports serve a
//! [`Server`]: the one `rmcp::ServerHandler`, which hands each call to the surface's [`Handler`] through one virtual
//! call (and, for `tools/call`, one boxed future). The serving code then exists once, in this crate, and each
//! surface's dispatch once, in its own.

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

/// What a surface answers. Implement it with `get_info` and `cairn_mcp::registry_handlers!();` (the tools from the
/// surface's [`Registry`](crate::registry::Registry)).
pub trait Handler: Send + Sync + 'static {
    /// The `initialize` answer: name, version, capabilities and instructions.
    fn get_info(&self) -> ServerConfig;

    /// `tools/list`: the tools this caller may see.
    fn list_tools(&self, context: &RequestContext<RoleServer>) -> ListToolsResult;

    /// The tool called `name`, if the surface has one.
    fn get_tool(&self, name: &str) -> Option<Tool>;

    /// `tools/call`.
    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> CallFuture<'_>;
}

/// What [`Handler::call_tool`] returns.
pub type CallFuture<'a> = BoxFuture<'a, Result<CallToolResponse, ErrorData>>;

/// A surface's [`Handler`], shared: what every transport serves (one per session over HTTP and SSE).
#[derive(Clone)]
pub struct Server(Arc<dyn Handler>);

impl Server {
    /// Serves `handler`.
    pub fn new(handler: impl Handler) -> Server {
        Server(Arc::new(handler))
    }
}

/// Makes the [`Server`] of each new session (the HTTP and SSE transports call it once per client).
pub type ServerFactory = Arc<dyn Fn() -> Server + Send + Sync>;

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        self.0.get_info()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(self.0.list_tools(&context))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.0.get_tool(name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.0.call_tool(request, context).await
    }
}
