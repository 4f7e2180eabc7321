//! `move_workflow`: move a workflow (and its assets) between the global and the repo source.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use crate::sources::Source;

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

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("move_workflow", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let (to, from) = (Source::from(params.to), source(params.from));
    server
        .run(params.scope(), move |service, scope| {
            service.move_workflow(scope, &params.id, to, from)
        })
        .await
}
