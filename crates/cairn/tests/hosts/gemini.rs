//! The real Gemini CLI (`@google/gemini-cli`, installed by `.ci/gemini-cli.sh` under `target/gemini-cli`), set up only
//! by `cairn setup gemini --trust` (its servers, the project folder trusted) in settings signed in with an API key,
//! runs the every-surface scenario with `gemini -p` against a Generative Language API stand-in; a developer
//! machine without it skips with a note, CI (`CI=true`) fails.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::every_surface::Scenario;
use crate::gemini_api::GeminiStandIn;

/// Where `.ci/gemini-cli.sh` installs Gemini CLI.
fn gemini() -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/gemini-cli/node_modules/.bin/gemini");
    if bin.is_file() {
        return Some(bin);
    }
    assert!(std::env::var("CI").as_deref() != Ok("true"), "CI must install Gemini CLI: bash .ci/gemini-cli.sh");
    eprintln!("skipped: Gemini CLI is not installed in target/gemini-cli (bash .ci/gemini-cli.sh)");
    None
}

#[tokio::test]
async fn gemini_cli_set_up_by_cairn_setup_runs_a_job_a_handback_run_and_claims_a_work_item() {
    let Some(gemini) = gemini() else { return };
    let scenario = Scenario::new("gemini").await;
    let model = GeminiStandIn::start(scenario.script()).await;
    // The user's own Gemini CLI settings (signed in with an API key, nothing sent home); `cairn setup gemini` adds its
    // servers to them and, with `--trust`, trusts the project.
    let settings_dir = scenario.home.join(".gemini");
    std::fs::create_dir_all(&settings_dir).unwrap();
    let own = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
        "privacy": {"usageStatisticsEnabled": false},
    });
    std::fs::write(settings_dir.join("settings.json"), own.to_string()).unwrap();
    let printed = scenario.setup(&["--trust"], &[]);
    assert!(printed.contains("ok: ") && !printed.contains("warning") && !printed.contains("trust the project"), "{printed}");
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(settings_dir.join("settings.json")).unwrap()).unwrap();
    assert_eq!(settings["security"]["auth"]["selectedType"], "gemini-api-key", "the user's settings are kept: {settings}");

    let node = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/gemini-cli/node_modules/.bin");
    let path = format!("{}:{}", node.display(), std::env::var("PATH").unwrap_or_default());
    let mut command = tokio::process::Command::new(&gemini);
    command
        .args(["--yolo", "--output-format", "json", "-p"])
        .arg("Write the note with the notes workflow, run the handback workflow, then claim the work item.")
        .current_dir(&scenario.project)
        .env_clear()
        .env("PATH", path)
        .env("HOME", &scenario.home)
        .env("GEMINI_API_KEY", "stand-in-key")
        .env("GOOGLE_GEMINI_BASE_URL", &model.base)
        .env("CAIRN_TOKEN", &scenario.token)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let out = tokio::time::timeout(std::time::Duration::from_secs(300), command.output())
        .await
        .expect("gemini finishes within five minutes")
        .unwrap();
    let transcript = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "gemini failed:\n{transcript}");
    assert!(transcript.contains("All done."), "{transcript}");
    let offered = model.requests().iter().filter_map(|r| r["body"]["tools"].as_array().cloned()).next().unwrap_or_default();
    let names: Vec<String> = offered
        .iter()
        .flat_map(|t| t["functionDeclarations"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f["name"].as_str().map(str::to_owned))
        .collect();
    for tool in ["mcp_deepwork_start_workflow", "mcp_roscoe_advance_run", "mcp_work_work_claim"] {
        assert!(names.iter().any(|n| n == tool), "Gemini CLI offered {tool}: {names:?}");
    }
    let first = model.requests().iter().find(|r| r["body"]["tools"].is_array()).unwrap()["body"].to_string();
    assert!(!first.contains("AskUserQuestion") && !first.contains("CLAUDE_CODE_"), "no Claude Code names reach Gemini");
    scenario.check(&transcript).await;
}
