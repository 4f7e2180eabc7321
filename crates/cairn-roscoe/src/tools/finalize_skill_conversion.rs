//! `finalize_skill_conversion`: step 2 of a skill import — extract the workflow from the host's completion, validate
//! it, copy the skill's `scripts/` beside it and write it.

use cairn_mcp::registry::Call;
use rmcp::model::{CallToolResult, Tool};

use crate::skills::UserDirs;
use crate::skills::convert::FinalizeRequest;

use super::{RoscoeServer, SourceArg, object_tool, parse, source, staged};

super::scoped_params! {
    /// `finalize_skill_conversion` arguments: `completion` plus the `finalize_args` convert_skill returned.
    struct Params {
        /// Your raw output for convert_skill's prompt.
        completion: String,
        /// From `finalize_args`.
        skill_path: String,
        /// From `finalize_args`.
        id: String,
        /// From `finalize_args`.
        #[serde(default)]
        source: Option<SourceArg>,
        /// `true`: replace a workflow with this id.
        #[serde(default)]
        overwrite: Option<bool>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "finalize_skill_conversion",
        "Step 2 of a skill import: `completion` plus `finalize_args`' fields. Writes the workflow and the skill's \
         scripts: `{ id, source, path, assetCount }`, or `{ ok: false, stage, message, code }`: repair, never invent.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, call: Call<'_>) -> CallToolResult {
    let params = match parse::<Params>("finalize_skill_conversion", call.args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let request = FinalizeRequest {
        completion: params.completion.clone(),
        skill_path: params.skill_path.clone(),
        id: params.id.clone(),
        source: source(params.source),
        overwrite: params.overwrite.unwrap_or(false),
        reach: server.reach.clone(),
    };
    let user = UserDirs::from_env();
    let scope = params.scope();
    staged(
        server
            .write(call.access, "finalize_skill_conversion", &params.id, scope, move |service, scope, actor| {
                service.finalize_skill_conversion(scope, &user, &request, actor)
            })
            .await,
    )
}
