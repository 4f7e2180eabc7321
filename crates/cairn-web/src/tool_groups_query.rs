//! `/roscoe/mcp?tools=runs,docs` offers only those tool groups (the roscoe server reads the query on each request);
//! a query naming an unknown group is answered `400 Bad Request` with the groups there are, before any MCP session
//! starts, instead of a server that quietly lists no tools.

use axum::Json;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Refuses a `/roscoe/mcp` request whose `tools=` names an unknown group.
pub(crate) async fn check(request: Request, next: Next) -> Response {
    let asked = (request.uri().path() == "/roscoe/mcp")
        .then(|| request.uri().query().and_then(cairn_roscoe::tool_groups::requested))
        .flatten();
    if let Some(Err(problem)) = asked {
        let body = json!({"error": format!("/roscoe/mcp?tools=: {problem}"), "code": "invalid_tool_groups"});
        return (StatusCode::BAD_REQUEST, Json(body)).into_response();
    }
    next.run(request).await
}
