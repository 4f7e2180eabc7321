//! The workflow page's schedules: a workflow with a `schedule` trigger shows it with its next fire times, and the
//! Pause / Resume form (with its form token) pauses and resumes it, as `roscoe schedules list` then shows; a post
//! without the page's token changes nothing.

use serde_json::Value;

use crate::support::{Browser, Env, http, start};

/// A global workflow run at 03:00 UTC every day (never during the test).
const NIGHTLY: &str = "name: nightly\ntriggers:\n  - schedule: '0 3 * * *'\ninitial: ask\nnodes:\n  ask:\n    type: human\n    \
    config: { prompt: Go? }\n    transitions: { go: $end }\n";

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
