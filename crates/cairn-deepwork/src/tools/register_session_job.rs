//! `register_session_job`: store a job definition that only this session can start.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{DeepworkServer, arguments, object_tool};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    /// Job name: lowercase letters, digits and underscores, starting with a letter (^[a-z][a-z0-9_]*$).
    job_name: String,
    /// The whole job.yml, as YAML text.
    job_definition_yaml: String,
    /// The session the job belongs to (CLAUDE_CODE_SESSION_ID, or the begin_step.session_id start_workflow returned).
    #[serde(default)]
    #[schemars(schema_with = "arguments::nullable_string")]
    session_id: Option<String>,
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "register_session_job",
        "Register a job that exists only for this session (e.g. a plan turned into steps). The definition is \
         validated like any job.yml; on success start it with start_workflow and the same session_id. Registering \
         the same name again replaces it.",
    )
}

pub(crate) async fn call(server: &DeepworkServer, args: Option<JsonObject>, ctx: &RequestContext<RoleServer>) -> CallToolResult {
    let params = match cairn_mcp::args::parse::<Params>("register_session_job", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    server
        .run("register_session_job", ctx, move |service, root| {
            service.register_session_job(root, &params.job_name, &params.job_definition_yaml, params.session_id)
        })
        .await
}
