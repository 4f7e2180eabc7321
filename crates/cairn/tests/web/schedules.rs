//! The workflow page's schedules: a workflow with a `schedule` trigger shows it with its next fire times, and the
//! Pause / Resume form (with its form token) pauses and resumes it, as `roscoe schedules list` then shows; a post
//! without the page's token changes nothing. And a served project's scheduled repo workflow runs its script only
//! once its text is approved by someone who may run scripts.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Browser, Env, http, start, start_serving};

/// A global workflow run at 03:00 UTC every day (never during the test).
const NIGHTLY: &str = "name: nightly\ntriggers:\n  - schedule: '0 3 * * *'\ninitial: ask\nnodes:\n  ask:\n    \
    type: human\n    config: { prompt: Go? }\n    transitions: { go: $end }\n";

const PAGE: &str = "/workflows/nightly?project=global&source=global";
const FORM: &str = "/workflows/nightly/schedules?project=global&source=global";

/// Whether `roscoe schedules list --global` shows the schedule paused.
fn listed_paused(env: &Env) -> bool {
    let out = env.cairn().args(["roscoe", "schedules", "list", "--global", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed[0]["workflowId"], "nightly", "{listed}");
    listed[0]["paused"].as_bool().unwrap()
}

#[tokio::test]
async fn the_workflow_page_pauses_and_resumes_its_schedules() {
    let env = start().await;
    std::fs::write(env.home.join("workflows/nightly.yaml"), NIGHTLY).unwrap();
    let mut browser = Browser::default();
    let (status, page) = browser.get(&env, PAGE).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<h2>Schedules</h2>") && page.contains("schedule 0 3 * * * (UTC)"), "{page}");
    assert!(page.contains("T03:00:00"), "its next fire times: {page}");
    assert!(page.contains("Pause schedules"), "{page}");

    let forged = http()
        .post(env.served.url(FORM))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("csrf=0000&paused=true")
        .send()
        .await
        .unwrap();
    assert_ne!(forged.status().as_u16(), 303, "a post without the page's token is refused");
    assert!(!listed_paused(&env), "and changes nothing");

    let (status, _) = browser.post(&env, FORM, &[("paused", "true")]).await;
    assert_eq!(status, 303);
    assert!(listed_paused(&env));
    let (_, page) = browser.get(&env, PAGE).await;
    assert!(page.contains(">paused<") && page.contains("Resume schedules"), "{page}");

    let (status, _) = browser.post(&env, FORM, &[("paused", "false")]).await;
    assert_eq!(status, 303);
    assert!(!listed_paused(&env));
    let (_, page) = browser.get(&env, PAGE).await;
    assert!(page.contains(">active<") && page.contains("Pause schedules"), "{page}");
}

/// A repo workflow whose script leaves a mark, started every second.
const MARK: &str = "name: mark\ntriggers:\n  - every: 1s\ninitial: touch\nnodes:\n  touch:\n    type: script\n    \
    config: { command: 'echo ran >> scheduled.log' }\n    transitions: { success: $end, failure: $fail }\n";

#[tokio::test]
async fn a_scheduled_repo_script_runs_only_on_an_approved_text() {
    let (env, root) = start_serving("shop").await;
    std::fs::write(root.join(".roscoe/workflows/mark.yaml"), MARK).unwrap();
    let marks = root.join("scheduled.log");
    let begun = Instant::now();
    while !env.served.log().contains("could not start its run") {
        assert!(begun.elapsed() < Duration::from_secs(60), "no refusal logged: {}", env.served.log());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(env.served.log().contains("roscoe schedules approve mark"), "the refusal says how: {}", env.served.log());
    assert!(!marks.exists(), "an unapproved repo script never runs");

    let approve = ["roscoe", "schedules", "approve", "mark", "--cwd", root.to_str().unwrap()];
    let out = env.cairn().args(approve).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let begun = Instant::now();
    while !marks.exists() {
        assert!(begun.elapsed() < Duration::from_secs(60), "the approved script never ran: {}", env.served.log());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Any other text is not approved: an edit stops the script again.
    std::fs::write(root.join(".roscoe/workflows/mark.yaml"), MARK.replace("echo ran", "echo edited")).unwrap();
    tokio::time::sleep(Duration::from_secs(4)).await;
    let text = std::fs::read_to_string(&marks).unwrap();
    assert!(!text.contains("edited"), "an edited file runs on no old approval: {text}");
}
