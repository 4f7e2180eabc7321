//! Cursor: the project's `.cursor/mcp.json` gets `mcpServers.deepwork` and `mcpServers.roscoe` (`command`, `args`,
//! and `env` with `${env:NAME}` for each cairn variable set now) and, with `--url`, `mcpServers.work` (`url` and an `Authorization` header with `${env:NAME}`, which Cursor fills
//! in from the environment). deepwork finds the project through the workspace root the client gives it.

use std::path::Path;

use super::json_settings::JsonSettings;
use super::servers::Server;
use super::{Edit, Work, json_mcp_servers};

/// The settings file, and its planned edit.
pub(super) fn plan(project: &Path, servers: &[Server], work: Option<&Work>) -> anyhow::Result<Edit> {
    let mut settings = JsonSettings::open(&project.join(".cursor/mcp.json"))?;
    let work = work.map(|w| (w, format!("Bearer ${{env:{}}}", w.token_env)));
    json_mcp_servers(&mut settings, servers, |name| format!("${{env:{name}}}"), work.as_ref().map(|(w, auth)| (*w, "url", auth.as_str())))?;
    Ok(settings.finish())
}
