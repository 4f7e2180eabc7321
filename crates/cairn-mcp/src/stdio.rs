//! Serving a surface over stdio: JSON-RPC on stdin/stdout, nothing else ever written to stdout.

use rmcp::{ServerHandler, ServiceExt};

/// Serves `handler` on this process's stdin/stdout until the client closes the stream.
pub async fn serve_stdio<H: ServerHandler>(handler: H) -> std::io::Result<()> {
    let running = handler.serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
