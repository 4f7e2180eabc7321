//! The browser test: `browser.mjs` (Node + playwright-core + Debian chromium) against a real `cairn serve`.
//!
//! `.ci/run` installs chromium and playwright-core (under `target/web-test`) first; a developer machine without
//! them skips this test with a note, but in CI (`CI=true`) a missing tool fails it. Screenshots go to
//! `target/web-artifacts/` (or `$WEB_ARTIFACTS`).

use std::path::PathBuf;

use crate::support::{start, token};

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[tokio::test]
async fn a_person_follows_a_run_live_decides_it_and_sees_a_claim_on_the_board() {
    let chromium = PathBuf::from(std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()));
    let playwright = std::env::var("PLAYWRIGHT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| workspace_root().join("target/web-test"));
    let node = std::process::Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    let ready = chromium.is_file() && playwright.join("node_modules/playwright-core").is_dir() && node;
    if !ready {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI must install chromium, node and playwright-core ({}, {})",
            chromium.display(),
            playwright.display()
        );
        eprintln!("skipped: the browser test needs {} and playwright-core in {}", chromium.display(), playwright.display());
        return;
    }
    let artifacts = std::env::var("WEB_ARTIFACTS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| workspace_root().join("target/web-artifacts"));
    std::fs::create_dir_all(&artifacts).unwrap();
    let _ = std::fs::remove_file(artifacts.join("browser.ok"));

    let env = start().await;
    let output = tokio::process::Command::new("node")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/web/browser.mjs"))
        .env("CAIRN_BASE", &env.served.base)
        .env("CAIRN_TOKEN", token(&env))
        .env("PLAYWRIGHT_DIR", &playwright)
        .env("CHROMIUM", &chromium)
        .env("ARTIFACTS", &artifacts)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "browser test failed:\n{stdout}\n{stderr}");
    assert!(stdout.lines().last().is_some_and(|l| l.ends_with("passed, 0 failed")), "{stdout}");
    for shot in ["run-page.png", "run-completed.png", "work-board.png"] {
        assert!(artifacts.join(shot).is_file(), "{shot} saved");
    }
}
