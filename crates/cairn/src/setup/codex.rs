//! Codex CLI: `~/.codex/config.toml` (or `$CODEX_HOME/config.toml`) gets `[mcp_servers.deepwork]` and
//! `[mcp_servers.roscoe]` (`command`, `args`, and `env_vars`: Codex passes a stdio server no variable it does not
//! name, and the servers need `CAIRN_HOME` / `CAIRN_DATABASE_URL` to find cairn's state) and, with `--url`,
//! `[mcp_servers.work]` (`url`, and `bearer_token_env_var` naming the variable that holds the token). The rest of the
//! file, comments included, stays.

use std::path::Path;

use toml_edit::{Array, Value};

use super::toml_settings::TomlSettings;
use super::servers::{PASSED_THROUGH, Server};
use super::{Edit, Work};

/// The settings file, and its planned edit.
pub(super) fn plan(home: &Path, servers: &[Server], work: Option<&Work>) -> anyhow::Result<Edit> {
    let folder = std::env::var_os("CODEX_HOME").map_or_else(|| home.join(".codex"), Into::into);
    let mut settings = TomlSettings::open(&folder.join("config.toml"))?;
    for server in servers {
        let name = server.name;
        settings.set("mcp_servers", name, "command", Value::from(server.command.as_str()))?;
        let args = server.args.iter().map(String::as_str).collect::<Array>();
        settings.set("mcp_servers", name, "args", Value::Array(args))?;
        settings.set("mcp_servers", name, "env_vars", Value::Array(PASSED_THROUGH.iter().copied().collect::<Array>()))?;
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
