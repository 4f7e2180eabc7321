//! `roscoe schedules …` and the `triggers:` key from a terminal: a bad cron, time zone, interval or webhook secret is
//! refused by `roscoe workflows validate` with what to write instead; `roscoe schedules list` prints each timed
//! trigger's next fire times, `pause` / `resume` flip it, and `approve` approves a repo workflow's text for its
//! triggers' runs (no server needed: the state is in the database).

use crate::runs_support::write_workflow;
use crate::support::Env;

/// A repo workflow with a weekday-morning schedule in Paris and a quarter-hourly interval.
const NIGHTLY: &str = "name: nightly\ntriggers:\n  - schedule: '0 9 * * MON-FRI'\n    timezone: Europe/Paris\n    \
    input: { target: main }\n  - every: 15m\n    input: { target: dev }\n\
    inputs:\n  target: { type: string, required: true }\ninitial: done\nnodes:\n  done:\n    type: condition\n    \
    config: { expression: 'input.target != \"\"' }\n    \
    transitions: { 'true': $end, 'false': $fail }\n";

fn with_triggers(triggers: &str) -> String {
    let node = "{ type: condition, config: { expression: 'true' }, transitions: { 'true': $end, 'false': $fail } }";
    format!("name: bad\ntriggers:\n{triggers}initial: a\nnodes:\n  a: {node}\n")
}

#[tokio::test]
async fn bad_triggers_are_refused_with_the_fix() {
    let env = Env::new();
    let repo = env.repo("project");
    let cases = [
        ("  - schedule: '0 9 * *'\n", "write exactly 5"),
        ("  - schedule: '61 * * * *'\n", "minute field `61`: 61 is outside 0-59"),
        ("  - schedule: '0 9 * * *'\n    timezone: Europe/Atlantis\n", "not a known IANA time zone"),
        ("  - every: 500ms\n", "shorter than a second"),
        ("  - every: soon\n", "not a duration"),
        ("  - webhook: { secret_env: ANTHROPIC_API_KEY }\n", "ROSCOE_HOOK_<NAME>"),
        ("  - every: 1m\n    jitter: 5s\n", "jitter"),
    ];
    for (triggers, expected) in cases {
        write_workflow(&repo, "bad", &with_triggers(triggers));
        let ran = env.roscoe(&repo, &["workflows", "validate", "bad", "--json"]).await;
        assert_eq!(ran.code, 1, "{triggers}: {ran:?}");
        let validated = ran.json();
        assert_eq!(validated["valid"], false);
        assert_eq!(validated["code"], "invalid_config", "{validated}");
        assert!(validated.to_string().contains(expected), "{triggers}: expected {expected:?} in {validated}");
    }
    write_workflow(&repo, "bad", &with_triggers("  - every: 1m\n"));
    assert_eq!(env.roscoe(&repo, &["workflows", "validate", "bad"]).await.code, 0);
}

#[tokio::test]
async fn schedules_are_listed_with_their_next_fire_times_and_paused_and_resumed() {
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "nightly", NIGHTLY);

    let table = env.roscoe(&repo, &["schedules", "list"]).await;
    assert_eq!(table.code, 0, "{table:?}");
    assert!(table.stdout.contains("schedule \"0 9 * * MON-FRI\" Europe/Paris"), "{table:?}");
    assert!(table.stdout.contains("every 15m"), "{table:?}");
    let listed = env.roscoe(&repo, &["schedules", "list", "--json"]).await.json();
    let weekday = &listed[0];
    assert_eq!((weekday["workflowId"].as_str(), weekday["kind"].as_str()), (Some("nightly"), Some("schedule")));
    let next: Vec<&str> = weekday["next"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(next.len(), 3, "{weekday}");
    // 09:00 in Paris is 08:00 or 07:00 UTC, on the hour.
    assert!(next.iter().all(|t| (t.contains("T08:00:00") || t.contains("T07:00:00")) && t.ends_with('Z')), "{next:?}");
    assert!(next.windows(2).all(|w| w[0] < w[1]), "{next:?}");
    let quarter = listed[1]["next"][0].as_str().unwrap();
    assert!([":00:00", ":15:00", ":30:00", ":45:00"].iter().any(|q| quarter.contains(q)), "{quarter}");
    assert_eq!(listed[0]["paused"], false);

    let paused = env.roscoe(&repo, &["schedules", "pause", "nightly"]).await;
    assert_eq!(paused.code, 0, "{paused:?}");
    assert!(paused.stderr.contains("paused the schedules of nightly"), "{paused:?}");
    let listed = env.roscoe(&repo, &["schedules", "list", "--json"]).await.json();
    assert!(listed.as_array().unwrap().iter().all(|s| s["paused"] == true), "{listed}");
    let resumed = env.roscoe(&repo, &["schedules", "resume", "nightly", "--json"]).await.json();
    assert!(resumed.as_array().unwrap().iter().all(|s| s["paused"] == false), "{resumed}");

    let approved = env.roscoe(&repo, &["schedules", "approve", "nightly", "--json"]).await;
    assert_eq!(approved.code, 0, "{approved:?}");
    assert_eq!(approved.json()["textSha256"].as_str().map(str::len), Some(64), "{approved:?}");
    let global = env.roscoe(&repo, &["schedules", "approve", "nightly", "--global"]).await;
    assert!(global.stderr.contains("global workflows need no approval"), "{global:?}");

    let missing = env.roscoe(&repo, &["schedules", "pause", "ghost"]).await;
    assert_ne!(missing.code, 0, "{missing:?}");
    assert!(missing.stderr.contains("roscoe schedules list"), "the error says where to look: {missing:?}");
    let global = env.roscoe(&repo, &["schedules", "list", "--global"]).await;
    assert!(global.stderr.contains("no workflow here has a `schedule` or `every` trigger"), "{global:?}");
}
