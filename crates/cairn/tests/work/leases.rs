//! Leases: an item claimed with `lease_seconds: 2` whose holder goes silent is returned to open, unheld, by the server
//! itself (nobody reads it meanwhile), with a "lease expired: held by … since …" event, once even with two servers
//! sweeping; one whose holder renews it by `work_heartbeat` stays held. Waits poll; nothing asserts a duration (the
//! time each expiry took is printed).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{ALL, Client, Env, Via, item, space, worker};

/// The longest a test waits for a lease to run out before giving up (a hang guard, not a timing assertion).
const GIVE_UP: Duration = Duration::from_secs(60);

/// `item_id` through `work_list` (what every agent sees), polled until it is open again; how long that took.
async fn until_open(client: &Client, space: &str, item_id: &str) -> Duration {
    let started = Instant::now();
    loop {
        let listed = client.ok("work_list", json!({"space_id": space, "state": "open"})).await;
        if listed["items"].as_array().unwrap().iter().any(|i| i["id"] == item_id) {
            return started.elapsed();
        }
        assert!(started.elapsed() < GIVE_UP, "{item_id} is still held after {GIVE_UP:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn events(client: &Client, id: &str, kind: &str) -> Vec<Value> {
    let whole = client.ok("work_get", json!({"item_id": id})).await;
    whole["events"].as_array().unwrap().iter().filter(|e| e["kind"] == kind).cloned().collect()
}

async fn a_silent_holder_loses_the_item_and_a_renewing_one_keeps_it(via: Via, two_servers: bool) {
    let mut env = Env::new();
    let account = env.account("acme", "").await;
    let bearer = env.bearer(&account, "worker", "agent", ALL).await;
    let watcher = env.client(via, &bearer).await;
    let _second = if two_servers { Some(env.second_server().await) } else { None };
    let space = space(&watcher, "Leases").await;
    let silent = item(&watcher, &space, "Silent").await;
    let renewed = item(&watcher, &space, "Renewed").await;

    // The worker's own session claims both and then goes away without a word.
    let worker = env.client(via, &bearer).await;
    let claimed = worker.ok("work_claim", json!({"item_id": silent, "claimant": "crashy", "lease_seconds": 2})).await;
    let held = &claimed["item"];
    assert_eq!(held["state"], "claimed");
    assert!(!held["lease_expires_at"].as_str().unwrap().is_empty(), "{held}");
    let listed = watcher.ok("work_list", json!({"space_id": space, "claimed_by": "crashy"})).await;
    assert_eq!(listed["items"][0]["lease_expires_at"], held["lease_expires_at"], "work_list shows the lease");
    worker.ok("work_claim", json!({"item_id": renewed, "claimant": "steady", "lease_seconds": 2})).await;
    worker.close().await;

    // Another session renews the second one while the first runs out.
    let keeper = env.client(via, &bearer).await;
    let renewing = {
        let renewed = renewed.clone();
        tokio::spawn(async move {
            let mut last = String::new();
            for _ in 0..40 {
                let beat = keeper.ok("work_heartbeat", json!({"item_id": renewed, "claimant": "steady"})).await;
                let until = beat["item"]["lease_expires_at"].as_str().unwrap().to_owned();
                assert!(until >= last, "each heartbeat moves the lease on: {until} after {last}");
                last = until;
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            keeper
        })
    };
    let took = until_open(&watcher, &space, &silent).await;
    println!("open again {took:?} after the watch began (the 2 s leases were claimed just before)");
    let whole = watcher.ok("work_get", json!({"item_id": silent})).await;
    assert_eq!((whole["item"]["state"].as_str(), whole["item"]["claimant"].as_str()), (Some("open"), Some("")));
    let expired = events(&watcher, &silent, "lease_expired").await;
    assert_eq!(expired.len(), 1, "expired once, by one server: {expired:?}");
    let message = expired[0]["data"]["message"].as_str().unwrap();
    assert!(message.starts_with("lease expired: held by crashy since "), "{message}");
    assert_eq!(expired[0]["by"], "cairn");

    // The renewed one stays held all along (the renewals ran for 10 s, five leases' worth).
    let keeper = renewing.await.expect("the heartbeats all succeeded");
    let still = watcher.ok("work_get", json!({"item_id": renewed})).await;
    assert_eq!((still["item"]["state"].as_str(), still["item"]["claimant"].as_str()), (Some("claimed"), Some("steady")));
    assert!(events(&watcher, &renewed, "lease_expired").await.is_empty());
    // Someone else cannot renew it; once it runs out, it is anyone's again.
    let refused = watcher.fail("work_heartbeat", json!({"item_id": renewed, "claimant": "thief"}), "conflict").await;
    assert_eq!(refused["details"]["holder"], "steady");
    keeper.close().await;
    until_open(&watcher, &space, &renewed).await;
    watcher.ok("work_claim", json!({"item_id": silent, "claimant": "next"})).await;
    watcher.close().await;
}

#[tokio::test]
async fn a_lease_runs_out_without_heartbeats_over_stdio() {
    a_silent_holder_loses_the_item_and_a_renewing_one_keeps_it(Via::Stdio, false).await;
}

#[tokio::test]
async fn a_lease_runs_out_once_with_two_servers_sweeping() {
    a_silent_holder_loses_the_item_and_a_renewing_one_keeps_it(Via::Http, true).await;
}

#[tokio::test]
async fn an_update_by_the_holder_renews_and_done_ends_the_lease() {
    let (_env, agent) = worker(Via::Stdio).await;
    let space = space(&agent, "Renewals").await;
    let id = item(&agent, &space, "Work").await;
    let claimed = agent.ok("work_claim", json!({"item_id": id, "claimant": "w", "lease_seconds": 600})).await;
    let first = claimed["item"]["lease_expires_at"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let updated = agent.ok("work_update", json!({"item_id": id, "state": "in_progress"})).await;
    let renewed = updated["item"]["lease_expires_at"].as_str().unwrap().to_owned();
    assert!(renewed > first, "an update by the holder renews: {first} → {renewed}");
    let again = agent.ok("work_claim", json!({"item_id": id, "claimant": "w", "lease_seconds": 600})).await;
    assert!(again["item"]["lease_expires_at"].as_str().unwrap() >= renewed.as_str());
    let done = agent.ok("work_update", json!({"item_id": id, "state": "done"})).await;
    assert!(done["item"].get("lease_expires_at").is_none_or(|l| l == ""), "done ends the lease: {done}");
    agent.fail("work_claim", json!({"item_id": id, "claimant": "w", "lease_seconds": 604_801}), "invalid_argument").await;
    let plain = item(&agent, &space, "No lease").await;
    let unleased = agent.ok("work_claim", json!({"item_id": plain, "claimant": "w"})).await;
    assert!(unleased["item"].get("lease_expires_at").is_none_or(|l| l == ""), "no lease unless asked");
    let beat = agent.ok("work_heartbeat", json!({"item_id": plain, "claimant": "w"})).await;
    assert_eq!(beat["item"]["state"], "claimed", "a heartbeat on a claim without a lease changes nothing");
    agent.close().await;
}

#[tokio::test]
async fn a_server_default_lease_applies_to_claims_made_without_one() {
    let env = Env::new();
    let account = env.account("acme", "").await;
    let bearer = env.bearer(&account, "worker", "agent", ALL).await;
    let served = env.server_with(&["--default-lease", "2s"]).await;
    let agent = Client::http(&served.url("/mcp"), &bearer).await;
    let space = space(&agent, "Defaults").await;
    let plain = item(&agent, &space, "Plain claim").await;
    let long = item(&agent, &space, "Own lease").await;
    let claimed = agent.ok("work_claim", json!({"item_id": plain, "claimant": "w"})).await;
    assert!(!claimed["item"]["lease_expires_at"].as_str().unwrap().is_empty(), "the default lease: {claimed}");
    agent.ok("work_claim", json!({"item_id": long, "claimant": "w", "lease_seconds": 3600})).await;
    until_open(&agent, &space, &plain).await;
    assert_eq!(events(&agent, &plain, "lease_expired").await.len(), 1);
    let kept = agent.ok("work_get", json!({"item_id": long})).await;
    assert_eq!(kept["item"]["claimant"], "w", "a claim's own lease_seconds wins over the default");
    agent.close().await;
    let refused = env.cairn_fails(&["serve", "--default-lease", "soon"]).await;
    assert!(refused.contains("not a span"), "{refused}");
}
