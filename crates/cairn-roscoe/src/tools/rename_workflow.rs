//! `rename_workflow`: rename a workflow's file stem and `name`, rewriting its referrers (all or nothing).

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use super::{RoscoeServer, SourceArg, object_tool, parse, source};

super::scoped_params! {
    /// `rename_workflow` arguments.
    struct Params {
        id: String,
        new_id: String,
        #[serde(default)]
        source: Option<SourceArg>,
        /// `false`: leave referrers on the old id.
        #[serde(default)]
        rewrite_references: Option<bool>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "rename_workflow",
        "Renames a workflow (file, `name`, assets) and the subworkflow nodes naming it, all or nothing: `{ id, \
         source, path, rewritten, failed, rolledBack }`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("rename_workflow", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let (source, cascade) = (
        source(params.source),
        params.rewrite_references != Some(false),
    );
    let scope = params.scope();
    let mut result = server
        .write(call.access, "rename_workflow", &params.new_id.clone(), scope, move |service, scope, _| {
            service.rename_workflow(scope, &params.id, &params.new_id, source, cascade)
        })
        .await;
    if result
        .structured_content
        .as_ref()
        .is_some_and(|r| r["rolledBack"] == true)
    {
        result.is_error = Some(true);
    }
    result
}
