//! Gemini CLI: `~/.gemini/settings.json` gets `mcpServers.deepwork` (its tools named `mcp_deepwork_…` in its texts, as
//! Gemini shows them) and `mcpServers.roscoe` (`command`, `args`, and `env` with `$NAME` for each cairn variable set
//! now, which Gemini fills in from its environment) and, with `--url`, `mcpServers.work` (`httpUrl` and an `Authorization` header that names the token's variable, which
//! Gemini CLI fills in from the environment). With `--trust`, `~/.gemini/trustedFolders.json` gets the project folder
//! as `TRUST_FOLDER`.

use std::path::Path;

use super::json_settings::JsonSettings;
use super::servers::Server;
use super::{Edit, Work, json_mcp_servers};

/// The settings file, and its planned edit.
pub(super) fn plan(home: &Path, servers: &[Server], work: Option<&Work>) -> anyhow::Result<Edit> {
    let mut settings = JsonSettings::open(&home.join(".gemini/settings.json"))?;
    let work = work.map(|w| (w, "httpUrl", format!("Bearer ${{{}}}", w.token_env)));
    json_mcp_servers(&mut settings, servers, |name| format!("${name}"), work.as_ref().map(|(w, key, auth)| (*w, *key, auth.as_str())))?;
    Ok(settings.finish())
}

/// The trusted-folders file, and its planned edit trusting `project` (an absolute path).
pub(super) fn trust(home: &Path, project: &Path) -> anyhow::Result<Edit> {
    let mut folders = JsonSettings::open(&home.join(".gemini/trustedFolders.json"))?;
    folders.set(&[&project.display().to_string()], serde_json::Value::String("TRUST_FOLDER".to_owned()))?;
    Ok(folders.finish())
}
