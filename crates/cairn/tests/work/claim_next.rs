//! `work_claim_next` raced: 16 agents call it at once on a space of 10 ready items and get 10 different items and 6
//! `{ item: null, reason }`, no item twice — as 16 `cairn work mcp` processes on one database, and over `/mcp` of two
//! `cairn serve` processes sharing it (two nodes; PostgreSQL when `CAIRN_TEST_POSTGRES_URL` is set).

use std::collections::BTreeSet;

use futures::future::join_all;
use serde_json::{Value, json};

use crate::support::{ALL, Client, Env, Via, item, space, worker};

/// Ten ready items in a new space, one blocked item and one held item that must never be handed out; the space's id
/// and the ten ids.
async fn ten_ready(setup: &Client) -> (String, BTreeSet<String>) {
    let space = space(setup, "Swarm").await;
    let mut ready = BTreeSet::new();
    for i in 0..10 {
        ready.insert(item(setup, &space, &format!("Task {i}")).await);
    }
    let first = ready.iter().next().unwrap().clone();
    setup.ok("work_create", json!({"space_id": space, "title": "Waits", "blocked_by": [first]})).await;
    let held = item(setup, &space, "Held").await;
    setup.ok("work_claim", json!({"item_id": held, "claimant": "owner"})).await;
    (space, ready)
}

/// Checks the 16 answers: 10 distinct ready items, each held by the agent that got it, and 6 nulls with a reason.
async fn check(answers: &[Value], ready: &BTreeSet<String>, setup: &Client) {
    let mut got = BTreeSet::new();
    let mut nulls = 0;
    for (i, answer) in answers.iter().enumerate() {
        match answer["item"].as_object() {
            Some(item) => {
                let id = item["id"].as_str().unwrap().to_owned();
                assert_eq!(item["claimant"], format!("agent {i}").as_str(), "{answer}");
                assert_eq!(item["state"], "claimed");
                assert!(got.insert(id.clone()), "{id} was handed out twice");
            }
            None => {
                assert!(answer["item"].is_null(), "{answer}");
                assert!(!answer["reason"].as_str().unwrap_or("").is_empty(), "a null says why: {answer}");
                nulls += 1;
            }
        }
    }
    assert_eq!((got.len(), nulls), (10, 6), "{answers:?}");
    assert_eq!(&got, ready, "exactly the ready items");
    for id in &got {
        let whole = setup.ok("work_get", json!({"item_id": id})).await;
        let claims = whole["events"].as_array().unwrap().iter().filter(|e| e["kind"] == "claimed").count();
        assert_eq!(claims, 1, "{id} was claimed once: {whole}");
    }
}

async fn race(clients: &[Client], space: &str) -> Vec<Value> {
    join_all(clients.iter().enumerate().map(|(i, client)| async move {
        client.ok("work_claim_next", json!({"space_id": space, "claimant": format!("agent {i}")})).await
    }))
    .await
}

#[tokio::test]
async fn sixteen_processes_claiming_next_at_once_get_ten_items_and_six_nulls() {
    let mut env = Env::new();
    let account = env.account("acme", "").await;
    let bearer = env.bearer(&account, "swarm", "agent", ALL).await;
    let setup = env.client(Via::Stdio, &bearer).await;
    let (space, ready) = ten_ready(&setup).await;
    let mut clients = Vec::new();
    for _ in 0..16 {
        clients.push(env.client(Via::Stdio, &bearer).await);
    }
    let answers = race(&clients, &space).await;
    check(&answers, &ready, &setup).await;
    let after = setup.ok("work_claim_next", json!({"space_id": space, "claimant": "late"})).await;
    assert_eq!(after["item"], Value::Null);
    for client in clients {
        client.close().await;
    }
    setup.close().await;
}

#[tokio::test]
async fn sixteen_agents_on_two_servers_claiming_next_at_once_get_ten_items_and_six_nulls() {
    let mut env = Env::new();
    let account = env.account("acme", "").await;
    let bearer = env.bearer(&account, "swarm", "agent", ALL).await;
    let setup = env.client(Via::Http, &bearer).await;
    let (space, ready) = ten_ready(&setup).await;
    let first = env.served().await.url("/mcp");
    let second = env.second_server().await;
    let urls = [first, second.url("/mcp")];
    let clients = join_all((0..16).map(|i| Client::http(&urls[i % 2], &bearer))).await;
    let answers = race(&clients, &space).await;
    check(&answers, &ready, &setup).await;
    for client in clients {
        client.close().await;
    }
    setup.close().await;
}

#[tokio::test]
async fn claim_next_takes_labels_and_a_lease_and_says_why_nothing_is_ready() {
    let (_env, agent) = worker(Via::Stdio).await;
    let space = space(&agent, "Labels").await;
    let empty = agent.ok("work_claim_next", json!({"space_id": space, "claimant": "w"})).await;
    assert_eq!(empty["item"], Value::Null);
    assert!(empty["reason"].as_str().unwrap().contains("nothing"), "{empty}");
    let ui = agent.ok("work_create", json!({"space_id": space, "title": "UI", "labels": ["ui"]})).await;
    let db = agent.ok("work_create", json!({"space_id": space, "title": "DB", "labels": ["db"], "priority": 0})).await;
    let next = agent.ok("work_claim_next", json!({"space_id": space, "claimant": "w", "labels": ["ui"], "lease_seconds": 600})).await;
    assert_eq!(next["item"]["id"], ui["item"]["id"], "only items with the label");
    assert!(!next["item"]["lease_expires_at"].as_str().unwrap().is_empty(), "{next}");
    let none = agent.ok("work_claim_next", json!({"space_id": space, "claimant": "w", "labels": ["ui"]})).await;
    assert_eq!(none["item"], Value::Null);
    let rest = agent.ok("work_claim_next", json!({"space_id": space, "claimant": "w"})).await;
    assert_eq!(rest["item"]["id"], db["item"]["id"]);
    assert!(rest["item"].get("lease_expires_at").is_none_or(|l| l == ""), "no lease unless asked: {rest}");
    agent.fail("work_claim_next", json!({"space_id": space, "claimant": ""}), "invalid_argument").await;
    agent.fail("work_claim_next", json!({"space_id": space, "claimant": "w", "lease_seconds": 0}), "invalid_argument").await;
    agent.fail("work_claim_next", json!({"space_id": "sp_missing", "claimant": "w"}), "not_found").await;
    agent.close().await;
}
