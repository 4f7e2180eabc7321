//! `list_skills`: Agent Skills found by content signature in the user's and the project's skill roots and the repo
//! tree.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use crate::skills::UserDirs;

use super::{RoscoeServer, object_tool, parse};

super::scoped_params! {
    /// `list_skills` arguments.
    struct Params {
        /// `false`: skill folders only, no project walk.
        #[serde(default)]
        content_scan: Option<bool>,
        /// Filter on name, description or path.
        #[serde(default)]
        query: Option<String>,
    }
}

pub(crate) fn tool() -> Tool {
    object_tool::<Params>(
        "list_skills",
        "Finds Agent Skills (.md with `name` and `description` front matter) in skill folders and the project: `{ \
         count, skills: [{ path, name, description }] }`.",
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
