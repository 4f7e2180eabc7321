//! The web UI's "Start a run" on an AI workflow runs to the end in a real browser (`start_ai.mjs`, with the web
//! tests' harness) with the Anthropic provider at a stand-in. `.ci/run` installs chromium and playwright-core
//! (under `target/web-test`); a developer machine without them skips the test with a note, but in CI (`CI=true`)
//! a missing tool fails it.

use std::path::PathBuf;

use super::anthropic::{Answer, Request, StandIn};
use super::support::{anthropic_env, start};

const THINK: &str = "name: think\ndefaults: { model: claude-sonnet-4-5 }\ninitial: draft\nnodes:\n  draft:\n    \
    type: ai_agent\n    config: { prompt: Write a haiku }\n    transitions: { success: vote }\n  vote:\n    \
    type: consensus\n    config: { mode: most_consistent, agentCount: 3, prompt: Best line? }\n    transitions: { success: $end }\n";

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[tokio::test]
async fn start_run_in_the_browser_runs_an_ai_workflow_to_the_end() {
    let chromium = PathBuf::from(std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()));
    let playwright =
        std::env::var("PLAYWRIGHT_DIR").map(PathBuf::from).unwrap_or_else(|_| workspace_root().join("target/web-test"));
    let node = std::process::Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !(chromium.is_file() && playwright.join("node_modules/playwright-core").is_dir() && node) {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CI must install chromium, node and playwright-core");
        eprintln!("skipped: the browser test needs {} and playwright-core in {}", chromium.display(), playwright.display());
        return;
    }
    let artifacts =
        std::env::var("WEB_ARTIFACTS").map(PathBuf::from).unwrap_or_else(|_| workspace_root().join("target/web-artifacts"));
    std::fs::create_dir_all(&artifacts).unwrap();
    let model = StandIn::start(|request: &Request| {
        let aggregate = request.first_user_text().contains("\"index\"");
        Answer::text(if aggregate { r#"{"reasoning": "same", "index": 0}"# } else { "An old pond" })
    })
    .await;
    let vars = anthropic_env(&model.base);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let env = start(&[("think", THINK)], "", &vars).await;

    let output = tokio::process::Command::new("node")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/models/start_ai.mjs"))
        .env("PLAYWRIGHT_DIR", &playwright)
        .env("CHROMIUM", &chromium)
        .env("ARTIFACTS", &artifacts)
        .env("CAIRN_BASE", &env.served.base)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "start_ai.mjs failed:\n{stdout}\n{stderr}");
    assert!(stdout.lines().last().is_some_and(|l| l.ends_with("passed, 0 failed")), "{stdout}");
    assert_eq!(model.requests().len(), 5, "the agent, three consensus agents and the aggregate");
}
