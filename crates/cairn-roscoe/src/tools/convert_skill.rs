//! `convert_skill`: step 1 of a skill import — resolve the skill, read its bundle, and hand the converter prompt to
//! the host to run as its own completion (no server-side model call).

use rmcp::model::{CallToolResult, JsonObject, Tool};

use crate::skills::UserDirs;
use crate::skills::convert::ConvertRequest;

use super::{RoscoeServer, SourceArg, object_tool, parse, source, staged};

super::scoped_params! {
    /// `convert_skill` arguments.
    struct Params {
        /// The skill file (or `name`).
        #[serde(default)]
        skill_path: Option<String>,
        /// A skill name from list_skills (or `skill_path`).
        #[serde(default)]
        name: Option<String>,
        /// The new workflow id (default: from the skill's name).
        #[serde(default)]
        id: Option<String>,
        /// `repo` or `global` (default: repo if any).
        #[serde(default)]
        source: Option<SourceArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "convert_skill",
        "Step 1 of a skill import: returns `{ action: \"run_completion\", prompt, model, finalize_args }`. Run \
         `prompt` yourself, then call finalize_skill_conversion.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("convert_skill", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let user = UserDirs::from_env();
    let request = ConvertRequest {
        skill_path: params.skill_path.clone(),
        name: params.name.clone(),
        id: params.id.clone(),
        source: source(params.source),
        reach: server.reach.clone(),
    };
    staged(
        server
            .run(params.scope(), move |service, scope| {
                service.convert_skill(scope, &user, &request)
            })
            .await,
    )
}
