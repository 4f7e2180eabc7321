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
        /// Your raw output from running convert_skill's prompt.
        completion: String,
        /// The skill file, as in `finalize_args` (it is read again from disk).
        skill_path: String,
        /// The workflow id, as in `finalize_args`.
        id: String,
        /// The workflow source, as in `finalize_args`.
        #[serde(default)]
        source: Option<SourceArg>,
        /// `true` to replace an existing workflow with this id in that source (and its scripts).
        #[serde(default)]
        overwrite: Option<bool>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "finalize_skill_conversion",
        "Step 2 of a skill import: pass `completion` (your raw output from convert_skill's prompt) and the fields \
         of its `finalize_args` (skill_path, id, source) as top-level arguments. Re-reads the skill from \
         `skill_path`, takes the last ```yaml block of the completion (or the bare YAML), sets `name` to `id`, \
         validates it, copies the skill's scripts/ to the workflow's folder (reachable as \
         $ROSCOE_WORKFLOW_DIR/scripts/) and writes the workflow. Returns `{ id, source, path, assetCount, \
         skippedBundleDirs, skippedNote? }`. A failure is `{ ok: false, stage, message, code }` with stage \
         resolve, parse, validate or write; parse and validate failures include `rawModelOutput` — repair it or \
         re-run the prompt, never invent a workflow to force success.",
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
