//! `list_skills`: Agent Skills found by content signature in the user's and the project's skill roots and the repo
//! tree.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use crate::skills::UserDirs;

use super::{RoscoeServer, object_tool, parse};

super::scoped_params! {
    /// `list_skills` arguments.
    struct Params {
        /// `false` skips the walk of the project tree (the skill roots are still searched). Default `true`.
        #[serde(default)]
        content_scan: Option<bool>,
        /// Keep only skills whose name, description or path contains this text (case-insensitive).
        #[serde(default)]
        query: Option<String>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "list_skills",
        "Finds Agent Skills: any .md file whose front matter has both `name` and `description` (blog posts \
         excluded). Searched in order: ~/.claude/skills, ~/.agents/skills, $CODEX_HOME/skills (default \
         ~/.codex/skills), ~/.config/opencode/skills, ~/.gemini/skills; then .claude/skills, .agents/skills and \
         .opencode/skills in every directory from cwd up to the git root; then the repo tree to depth 6 (skipping \
         .git, node_modules, dist, build, .next, .turbo, .nx, coverage, .cache; .gitignore is not read), unless \
         `content_scan: false`. Returns `{ count, skills: [{ path, name, description }] }`; convert one with \
         convert_skill.",
    )
}

pub(crate) async fn call(server: &RoscoeServer, args: Option<JsonObject>) -> CallToolResult {
    let params = match parse::<Params>("list_skills", args) {
        Ok(params) => params,
        Err(error) => return error,
    };
    let user = UserDirs::from_env();
    server
        .run(params.scope(), move |service, scope| {
            Ok(service.list_skills(
                scope,
                &user,
                params.content_scan.unwrap_or(true),
                params.query.as_deref(),
            ))
        })
        .await
}
