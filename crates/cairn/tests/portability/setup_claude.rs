//! `cairn setup claude`: the cairn marketplace, the plugin and permission for its tools merged into
//! `~/.claude/settings.json`; and the real Claude Code (when `.ci/claude-code.sh` installed it), started with only
//! that `HOME` and without skipping permissions, loads the plugin from the marketplace and calls a deepwork tool.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::anthropic::{Answer, Request, StandIn};
use crate::claude_code::ClaudeCode;
use crate::setup_run::{cairn_setup, read, setup, write};

/// The repository: a cairn checkout, so a `directory` marketplace.
fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

#[test]
fn claude_settings_get_the_marketplace_the_plugin_and_permissions_kept_with_the_users_own() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".claude/settings.json");
    write(&file, r#"{"model": "opus", "permissions": {"allow": ["Bash(git status)"], "deny": ["Read(.env)"]}}"#);
    let repo = checkout();

    let printed = cairn_setup(home.path(), &repo, &["claude", "--url", "http://127.0.0.1:7777"]);
    assert!(printed.contains("+ enabledPlugins.cairn@cairn = true"), "{printed}");
    let settings: Value = serde_json::from_str(&read(&file)).unwrap();
    assert_eq!(
        settings,
        json!({
            "model": "opus",
            "permissions": {
                "allow": ["Bash(git status)", "mcp__plugin_cairn_deepwork__*", "mcp__plugin_cairn_roscoe__*", "mcp__plugin_cairn_work__*"],
                "deny": ["Read(.env)"]
            },
            "extraKnownMarketplaces": {"cairn": {"source": {"source": "directory", "path": repo}}},
            "enabledPlugins": {"cairn@cairn": true},
            "env": {"CAIRN_URL": "http://127.0.0.1:7777"}
        })
    );
    let written = read(&file);
    let again = cairn_setup(home.path(), &repo, &["claude", "--url", "http://127.0.0.1:7777", "--marketplace", repo.to_str().unwrap()]);
    assert!(again.contains("already set up; nothing to change.\n"), "{again}");
    // From a folder inside the checkout, setup finds the checkout it is in.
    let inside = cairn_setup(home.path(), &repo.join("crates/cairn/src"), &["claude", "--url", "http://127.0.0.1:7777"]);
    assert!(inside.contains("already set up; nothing to change.\n"), "the same checkout from a subfolder: {inside}");
    assert_eq!(read(&file), written);

    // A GitHub marketplace instead of the checkout, shown first in a dry run.
    let dry = cairn_setup(home.path(), home.path(), &["claude", "--marketplace", "someone/cairn", "--dry-run"]);
    assert!(dry.contains(r#"~ extraKnownMarketplaces.cairn.source = {"source":"github","repo":"someone/cairn"} (was {"#), "{dry}");
    assert_eq!(read(&file), written);

    // The plugin reads the token from CAIRN_TOKEN only; outside a checkout the marketplace must be named.
    let other_token = setup("cairn", home.path(), &repo, &["claude", "--url", "http://127.0.0.1:7777", "--token-env", "MY_TOKEN"]);
    assert!(!other_token.success && other_token.stderr.contains("reads the work token from CAIRN_TOKEN"), "{other_token:?}");
    let nowhere = setup("cairn", home.path(), home.path(), &["claude"]);
    assert!(!nowhere.success && nowhere.stderr.contains("--marketplace DIR"), "{nowhere:?}");
    assert_eq!(read(&file), written);
}

/// `claude <args>` in `project` with `HOME` at `home`, offline against `model_base`, permissions as the settings say:
/// its stdout.
async fn claude(code: &ClaudeCode, project: &Path, home: &Path, model_base: &str, args: &[&str]) -> String {
    let output = code.output(project, home, model_base, args, &[]).await;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "claude {args:?} failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    stdout
}

#[tokio::test]
async fn after_setup_claude_code_loads_the_plugin_and_may_call_its_tools() {
    let Some(code) = ClaudeCode::find() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (home, project) = (tmp.path().join("home"), tmp.path().join("project"));
    std::fs::create_dir_all(&project).unwrap();
    let repo = checkout();
    cairn_setup(&home, &project, &["claude", "--marketplace", repo.to_str().unwrap(), "--url", "http://127.0.0.1:9"]);

    let model = StandIn::start(|request: &Request| {
        if !request.has_tools() {
            return Answer::text("List the workflows");
        }
        // A marketplace plugin's servers connect in the background: wait for them when Claude Code says so.
        let results = request.tool_results();
        match results.last() {
            Some(last) if last.contains("\"jobs\"") || results.len() > 6 => Answer::text(format!("get_workflows answered: {last}")),
            Some(last) if last.contains("still connecting") => Answer::tool("WaitForMcpServers", json!({})),
            _ => Answer::tool("mcp__plugin_cairn_deepwork__get_workflows", json!({})),
        }
    })
    .await;
    let printed = claude(&code, &project, &home, &model.base, &["-p", "Which workflows are there?", "--output-format", "json"]).await;
    let result: Value = serde_json::from_str(printed.trim()).unwrap_or_else(|_| panic!("no JSON result: {printed}"));
    let answer = result["result"].as_str().unwrap_or_default();
    assert!(answer.contains("get_workflows answered") && answer.contains("\"jobs\""), "the tool ran, unprompted: {result}");

    let listed = claude(&code, &project, &home, &model.base, &["mcp", "list"]).await;
    assert!(listed.contains("plugin:cairn:deepwork: deepwork serve --platform claude --plugin cairn - ✔ Connected"), "{listed}");
    assert!(listed.contains("plugin:cairn:roscoe: roscoe mcp - ✔ Connected"), "{listed}");
    assert!(listed.contains("plugin:cairn:work: http://127.0.0.1:9/mcp"), "the URL comes from the settings' env: {listed}");
}
