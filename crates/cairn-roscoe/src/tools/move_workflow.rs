//! `move_workflow`: move a workflow (and its assets) between the global and the repo source.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use crate::source::Source;

use super::{RoscoeServer, SourceArg, object_tool, parse, source};

super::scoped_params! {
    /// `move_workflow` arguments.
    struct Params {
        id: String,
        to: SourceArg,
        #[serde(default)]
        from: Option<SourceArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "move_workflow",
        "Moves a workflow and its asset folder to the other source. Returns `{ ok, id, from, to, path }`.",
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
