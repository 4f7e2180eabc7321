//! The real Codex CLI (`@openai/codex`, installed by `.ci/codex.sh` under `target/codex`), set up only by `cairn setup
//! codex`, runs the every-surface scenario with `codex exec --json` against a Responses API stand-in; a developer
//! machine without it skips with a note, CI (`CI=true`) fails.

use std::path::{Path, PathBuf};

use crate::every_surface::Scenario;
use crate::responses::ResponsesStandIn;

/// Where `.ci/codex.sh` installs Codex.
fn codex() -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/codex/node_modules/.bin/codex");
    if bin.is_file() {
        return Some(bin);
    }
    assert!(std::env::var("CI").as_deref() != Ok("true"), "CI must install Codex: bash .ci/codex.sh");
    eprintln!("skipped: Codex is not installed in target/codex (bash .ci/codex.sh)");
    None
}

#[tokio::test]
async fn codex_set_up_by_cairn_setup_runs_a_job_a_handback_run_and_claims_a_work_item() {
    let Some(codex) = codex() else { return };
    let scenario = Scenario::new("codex").await;
    let model = ResponsesStandIn::start(scenario.script()).await;
    // The user's own Codex settings: a model provider (here the stand-in), written before cairn's servers join them.
    let codex_home = scenario.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let provider = format!(
        "model = \"stand-in-model\"\nmodel_provider = \"standin\"\n\n[model_providers.standin]\nname = \"stand-in\"\n\
         base_url = \"{}\"\nwire_api = \"responses\"\nenv_key = \"STANDIN_KEY\"\n",
        model.base
    );
    std::fs::write(codex_home.join("config.toml"), provider).unwrap();
    let printed = scenario.setup(&[], &[("CODEX_HOME", &codex_home)]);
    assert!(printed.contains("ok: ") && !printed.contains("warning"), "{printed}");

    let mut command = tokio::process::Command::new(&codex);
    command
        .args(["exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-C"])
        .arg(&scenario.project)
        .arg("Write the note with the notes workflow, run the handback workflow, then claim the work item.")
        .current_dir(&scenario.project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &scenario.home)
        .env("CODEX_HOME", &codex_home)
        .env("STANDIN_KEY", "stand-in-key")
        .env("CAIRN_TOKEN", &scenario.token)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let out = tokio::time::timeout(std::time::Duration::from_secs(300), command.output())
        .await
        .expect("codex finishes within five minutes")
        .unwrap();
    let transcript = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "codex failed:\n{transcript}");
    let calls = transcript.lines().filter(|line| line.contains(r#""type":"item.completed""#) && line.contains("mcp_tool_call"));
    assert_eq!(calls.count(), 7, "every call reached its server:\n{transcript}");
    assert!(transcript.contains("All done."), "{transcript}");
    let first = model.requests().iter().find(|r| r["tools"].is_array()).unwrap().to_string();
    assert!(!first.contains("AskUserQuestion") && !first.contains("CLAUDE_CODE_"), "no Claude Code names reach Codex");
    assert!(first.contains(r#""name":"mcp__work""#), "Codex offers the work tools: {first}");
    scenario.check(&transcript).await;
}
