//! `move_workflow`: move a workflow (and its assets) between the global and the repo source.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use crate::source::Source;

use super::{RoscoeServer, SourceArg, object_tool, parse, source};

super::scoped_params! {
    /// `move_workflow` arguments.
    struct Params {
        /// The workflow id (its file stem).
        id: String,
        /// The source to move it to: `repo` or `global`.
        to: SourceArg,
        /// The source to move it from (default: where it resolves, repo first).
        #[serde(default)]
        from: Option<SourceArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "move_workflow",
        "Moves a workflow file and its asset folder between the global and the project (repo) source. Refuses \
         (`conflict`) if the target source already has the id. Returns `{ ok: true, id, from, to, path }`. Error \
         codes: not_found, conflict, no_repo_source, invalid_input (to equals from), io_error.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("move_workflow", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let (to, from) = (Source::from(params.to), source(params.from));
    let scope = params.scope();
    server
        .write(call.access, "move_workflow", &params.id.clone(), scope, move |service, scope, _| {
            service.move_workflow(scope, &params.id, to, from)
        })
        .await
}
