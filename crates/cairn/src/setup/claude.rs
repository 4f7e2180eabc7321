//! Claude Code: `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR/settings.json`) gets the cairn marketplace
//! (`extraKnownMarketplaces.cairn`, a cairn checkout or a GitHub repository), the plugin turned on
//! (`enabledPlugins["cairn@cairn"]`) and permission for the plugin's tools (`mcp__plugin_cairn_<server>__*`). The plugin
//! brings the servers, hooks, agent and commands; Claude Code installs it from the marketplace when a session starts.
//! The plugin's work server reads `CAIRN_URL` and `CAIRN_TOKEN`: `--url` sets `env.CAIRN_URL` in the settings, and the
//! token stays in the environment as `CAIRN_TOKEN`.

use std::path::Path;

use serde_json::json;

use super::json_settings::JsonSettings;
use super::{Edit, Marketplace, Work};

/// The settings file, and its planned edit.
pub(super) fn plan(home: &Path, marketplace: &Marketplace, work: Option<&Work>) -> anyhow::Result<Edit> {
    let folder = std::env::var_os("CLAUDE_CONFIG_DIR").map_or_else(|| home.join(".claude"), Into::into);
    let mut settings = JsonSettings::open(&folder.join("settings.json"))?;
    let source = match marketplace {
        Marketplace::Directory(dir) => json!({"source": "directory", "path": dir}),
        Marketplace::GitHub(repo) => json!({"source": "github", "repo": repo}),
    };
    settings.set(&["extraKnownMarketplaces", "cairn", "source"], source)?;
    settings.set(&["enabledPlugins", "cairn@cairn"], json!(true))?;
    let mut servers = vec!["deepwork", "roscoe"];
    if let Some(work) = work {
        anyhow::ensure!(
            work.token_env == "CAIRN_TOKEN",
            "Claude Code: the cairn plugin reads the work token from CAIRN_TOKEN; export the token under that name and \
             leave out --token-env"
        );
        let base = work.url.strip_suffix("/mcp").unwrap_or(&work.url);
        settings.set(&["env", "CAIRN_URL"], json!(base))?;
        servers.push("work");
    }
    for server in servers {
        settings.add_to_list(&["permissions", "allow"], &format!("mcp__plugin_cairn_{server}__*"))?;
    }
    Ok(settings.finish())
}
