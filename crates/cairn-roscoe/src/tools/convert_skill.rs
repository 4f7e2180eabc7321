//! `convert_skill`: step 1 of a skill import — resolve the skill, read its bundle, and hand the converter prompt to
//! the host to run as its own completion (no server-side model call).

use rmcp::model::{CallToolResult, JsonObject, Tool};

use crate::skills::UserDirs;
use crate::skills::convert::ConvertRequest;

use super::{RoscoeServer, SourceArg, object_tool, parse, source, staged};

super::scoped_params! {
    /// `convert_skill` arguments.
    struct Params {
        /// The skill file (absolute, or relative to `cwd`). Give this or `name`.
        #[serde(default)]
        skill_path: Option<String>,
        /// A skill name as list_skills shows it (case-insensitive). Give this or `skill_path`.
        #[serde(default)]
        name: Option<String>,
        /// The workflow id to create (default: the skill's name as an id).
        #[serde(default)]
        id: Option<String>,
        /// Where the workflow will be written: `repo` or `global` (default: repo when the project has a repo source,
        /// else global).
        #[serde(default)]
        source: Option<SourceArg>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "convert_skill",
        "Step 1 of turning a skill (SKILL.md) into a workflow. Resolves the skill by `skill_path` or `name`, reads its \
         bundle and returns `{ action: \"run_completion\", prompt, model, finalize_args }`: run `prompt` yourself as \
         one completion (this server calls no model), then pass your raw output as `completion` together with \
         the fields of `finalize_args` (as top-level arguments) to finalize_skill_conversion. A skill that cannot \
         be resolved returns `{ ok: false, stage: \"resolve\", message, code }`.",
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
