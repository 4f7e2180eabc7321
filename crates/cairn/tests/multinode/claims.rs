//! Claims across nodes: 200 claims at once, spread over two nodes, on 20 items: exactly one winner per item, and
//! every refusal names that item's winner.

use std::collections::HashMap;

use futures::future::join_all;
use serde_json::{Value, json};

use crate::support::{Client, Cluster};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_claims_over_two_nodes_on_twenty_items_have_twenty_winners() {
    let Some(cluster) = Cluster::postgres("claims") else { return };
    let nodes = [cluster.node("a").await, cluster.node("b").await];
    let bearer = cluster.bearer().await;
    let setup = Client::http(&nodes[0].url("/mcp"), Some(&bearer)).await;
    let space = setup.ok("decisions_create_space", json!({"name": "Race", "description": "claims"})).await;
    let space = space["space"]["id"].as_str().unwrap().to_owned();
    let mut items = Vec::new();
    for n in 0..20 {
        let made = setup.ok("work_create", json!({"space_id": space, "title": format!("item {n}")})).await;
        items.push(made["item"]["id"].as_str().unwrap().to_owned());
    }
    // 20 clients, even ones on node a and odd ones on node b; each item gets five claims through each node.
    let urls = [nodes[0].url("/mcp"), nodes[1].url("/mcp")];
    let clients = join_all((0..20).map(|c| Client::http(&urls[c % 2], Some(&bearer)))).await;
    let claims = (0..200).map(|i| {
        let (item, node) = (i % 20, (i / 20) % 2);
        let client = &clients[node + 2 * (i % 10)];
        let args = json!({"item_id": items[item], "claimant": format!("agent {i}")});
        async move { (item, format!("agent {i}"), client.call("work_claim", args).await) }
    });
    let results = join_all(claims).await;

    let mut winners: HashMap<usize, Vec<String>> = HashMap::new();
    for (item, claimant, result) in &results {
        if result.is_error != Some(true) {
            winners.entry(*item).or_default().push(claimant.clone());
        }
    }
    assert_eq!(winners.len(), 20, "every item has a winner");
    assert!(winners.values().all(|w| w.len() == 1), "exactly one winner per item: {winners:?}");
    for (item, claimant, result) in &results {
        let winner = &winners[item][0];
        if claimant == winner {
            continue;
        }
        let error = &result.structured_content.as_ref().expect("a structured refusal")["error"];
        assert_eq!(error["code"], "conflict", "{error}");
        assert_eq!(error["details"]["holder"], winner.as_str(), "the refusal names the winner: {error}");
    }

    // Read back through the other node.
    let reader = Client::http(&nodes[1].url("/mcp"), Some(&bearer)).await;
    for (item, winner) in &winners {
        let held = reader.ok("work_list", json!({"claimed_by": winner[0]})).await;
        let ids: Vec<&Value> = held["items"].as_array().unwrap().iter().map(|i| &i["id"]).collect();
        assert_eq!(ids, [items[*item].as_str()], "{} holds only item {item}", winner[0]);
    }
    for client in clients {
        client.close().await;
    }
    reader.close().await;
    setup.close().await;
}
