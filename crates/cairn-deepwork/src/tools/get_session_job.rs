//! `get_session_job`: read back the job.yml of a session job.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{DeepworkServer, arguments, object_tool};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    /// Name the job was registered under.
    job_name: String,
    /// The session it was registered in.
    #[serde(default)]
    #[schemars(schema_with = "arguments::nullable_string")]
    session_id: Option<String>,
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "get_session_job",
        "Return the YAML of a job registered with register_session_job in this session.",
    )
}

pub(crate) async fn call(server: &DeepworkServer, args: Option<JsonObject>, ctx: &RequestContext<RoleServer>) -> CallToolResult {
    let params = match cairn_mcp::args::parse::<Params>("get_session_job", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    server
        .run("get_session_job", ctx, move |service, root| {
            service.get_session_job(root, &params.job_name, params.session_id)
        })
        .await
}
