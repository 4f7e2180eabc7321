//! A node killed mid-load: clients of two nodes create and claim items without pause; node a is killed with
//! SIGKILL while they do. Every create and claim either node acknowledged before (or after) the kill is in the
//! database afterwards, read through node b.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::watch;

use crate::support::{Client, Cluster};

/// A write a node acknowledged.
#[derive(Debug, Clone)]
enum Ack {
    /// `work_create` answered with this item id.
    Created(String),
    /// `work_claim` of the item by the claimant answered with success.
    Claimed(String, String),
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killing_a_node_mid_load_loses_no_acknowledged_write() {
    let Some(cluster) = Cluster::postgres("crash") else { return };
    let a = cluster.node("a").await;
    let b = cluster.node("b").await;
    let bearer = cluster.bearer().await;
    let setup = Client::http(&b.url("/mcp"), Some(&bearer)).await;
    let space = setup.ok("decisions_create_space", json!({"name": "Load", "description": "a node dies"})).await;
    let space = space["space"]["id"].as_str().unwrap().to_owned();

    let acks: Arc<Mutex<Vec<Ack>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    // Node a's clients give up a call in flight once the node is dead: it was never acknowledged.
    let (killed, dead) = watch::channel(false);
    let mut workers = Vec::new();
    for w in 0..8 {
        let on_a = w % 2 == 0;
        let client = Client::http(&[&a, &b][w % 2].url("/mcp"), Some(&bearer)).await;
        let (acks, stop, space, mut dead) = (acks.clone(), stop.clone(), space.clone(), dead.clone());
        workers.push(tokio::spawn(async move {
            let mut k = 0;
            let mut call = async |tool: &str, args: Value| {
                tokio::select! {
                    answer = client.try_call(tool, args) => answer.ok(),
                    _ = dead.wait_for(|dead| *dead && on_a) => None,
                }
            };
            while !stop.load(Ordering::SeqCst) {
                k += 1;
                let args = json!({"space_id": space, "title": format!("worker {w} item {k}")});
                let Some(made) = call("work_create", args).await else { break };
                assert_ne!(made.is_error, Some(true), "{made:?}");
                let id = made.structured_content.unwrap()["item"]["id"].as_str().unwrap().to_owned();
                acks.lock().unwrap().push(Ack::Created(id.clone()));
                let claimant = format!("worker {w}");
                let Some(claimed) = call("work_claim", json!({"item_id": id, "claimant": claimant})).await else {
                    break;
                };
                assert_ne!(claimed.is_error, Some(true), "{claimed:?}");
                acks.lock().unwrap().push(Ack::Claimed(id, claimant));
            }
            client.close().await;
        }));
    }

    wait_for_acks(&acks, 80).await;
    a.signal("KILL");
    killed.send_replace(true);
    let at_kill = acks.lock().unwrap().len();
    // Node b's clients go on after the kill.
    wait_for_acks(&acks, at_kill + 40).await;
    stop.store(true, Ordering::SeqCst);
    for worker in workers {
        worker.await.unwrap();
    }

    let stored = items(&setup, &space).await;
    let acks = acks.lock().unwrap().clone();
    for ack in &acks {
        match ack {
            Ack::Created(id) => assert!(stored.contains_key(id), "acknowledged item {id} is missing"),
            Ack::Claimed(id, claimant) => {
                let item = &stored[id];
                assert_eq!(item["state"], "claimed", "{item}");
                assert_eq!(item["claimant"], claimant.as_str(), "{item}");
            }
        }
    }
    assert!(acks.len() > at_kill, "node b kept acknowledging writes after the kill");
    setup.close().await;
}

/// Waits (up to two minutes) until at least `count` writes were acknowledged.
async fn wait_for_acks(acks: &Mutex<Vec<Ack>>, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while acks.lock().unwrap().len() < count {
        assert!(Instant::now() < deadline, "gave up waiting for {count} acknowledged writes");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every item of `space` (by id), read page by page.
async fn items(client: &Client, space: &str) -> HashMap<String, Value> {
    let mut found = HashMap::new();
    let mut token = String::new();
    loop {
        let page = client.ok("work_list", json!({"space_id": space, "page_size": 200, "page_token": token})).await;
        for item in page["items"].as_array().unwrap() {
            found.insert(item["id"].as_str().unwrap().to_owned(), item.clone());
        }
        match page["next_page_token"].as_str() {
            Some(next) if !next.is_empty() => token = next.to_owned(),
            _ => return found,
        }
    }
}
