//! Codex CLI: `~/.codex/config.toml` (or `$CODEX_HOME/config.toml`) gets `[mcp_servers.deepwork]` and
//! `[mcp_servers.roscoe]` (`command`, `args`) and, with `--url`, `[mcp_servers.work]` (`url`, and
//! `bearer_token_env_var` naming the variable that holds the token). The rest of the file, comments included, stays.

use std::path::Path;

use toml_edit::{Array, Value};

use super::toml_settings::TomlSettings;
use super::{Edit, Work, stdio_servers};

/// The settings file, and its planned edit.
pub(super) fn plan(home: &Path, work: Option<&Work>) -> anyhow::Result<Edit> {
    let folder = std::env::var_os("CODEX_HOME").map_or_else(|| home.join(".codex"), Into::into);
    let mut settings = TomlSettings::open(&folder.join("config.toml"))?;
    for (name, command, args) in stdio_servers("codex") {
        settings.set("mcp_servers", name, "command", Value::from(command))?;
        settings.set("mcp_servers", name, "args", Value::Array(args.iter().copied().collect::<Array>()))?;
        for key in ["url", "bearer_token_env_var"] {
            settings.remove("mcp_servers", name, key)?;
        }
    }
    if let Some(work) = work {
        settings.set("mcp_servers", "work", "url", Value::from(work.url.as_str()))?;
        settings.set("mcp_servers", "work", "bearer_token_env_var", Value::from(work.token_env.as_str()))?;
        for key in ["command", "args"] {
            settings.remove("mcp_servers", "work", key)?;
        }
    }
    Ok(settings.finish())
}
