//! `duplicate_workflow`: copy a workflow (and its assets) to a new id, rewriting its `name`.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use super::{RoscoeServer, SourceArg, object_tool, parse, source};

super::scoped_params! {
    /// `duplicate_workflow` arguments.
    struct Params {
        /// The workflow to copy.
        id: String,
        #[serde(default)]
        source: Option<SourceArg>,
        to_id: String,
        /// Default: the original's.
        #[serde(default)]
        to_source: Option<SourceArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "duplicate_workflow",
        "Copies a workflow to `to_id` (its `name` too), optionally into `to_source`. Returns `{ id, source, path }`.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("duplicate_workflow", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let (from, to) = (source(params.source), source(params.to_source));
    let scope = params.scope();
    server
        .write(call.access, "duplicate_workflow", &params.to_id.clone(), scope, move |service, scope, _| {
            service.duplicate_workflow(scope, &params.id, from, &params.to_id, to)
        })
        .await
}
