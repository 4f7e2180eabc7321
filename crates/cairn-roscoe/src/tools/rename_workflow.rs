//! `rename_workflow`: rename a workflow's file stem and `name`, rewriting its referrers (all or nothing).

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use super::{RoscoeServer, SourceArg, object_tool, parse, source};

super::scoped_params! {
    /// `rename_workflow` arguments.
    struct Params {
        /// The workflow id (its file stem).
        id: String,
        /// The new id.
        new_id: String,
        /// The source: `repo` or `global` (default: repo first when the project has a repo source).
        #[serde(default)]
        source: Option<SourceArg>,
        /// `false` to rename alone, leaving referrers pointing at the old id (default `true`: rewrite them).
        #[serde(default)]
        rewrite_references: Option<bool>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "rename_workflow",
        "Renames the file stem AND the `name` field (the asset folder follows). By default every workflow whose \
         subworkflow node points at the old id is rewritten to the new one, keeping its formatting; pass \
         `rewrite_references: false` to rename alone. All or nothing: if a referrer cannot be written every file is \
         restored and the result has `rolledBack: true` (and isError). Returns `{ id, source, path, rewritten, failed, \
         rolledBack }`. Refuses (`conflict`) if `new_id` exists in the same source.",
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
