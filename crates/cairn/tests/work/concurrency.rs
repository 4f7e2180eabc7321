//! Claims race: 100 clients claim one item at once through two `cairn serve` processes sharing one database; exactly
//! one wins and the 99 others are refused naming the winner. Tokens for one new principal made by several
//! `cairn work token create` processes at once all speak for that one principal.

use futures::future::join_all;
use serde_json::json;

use crate::support::{ALL, Client, Env, Via, item, space};

#[tokio::test]
async fn one_hundred_concurrent_claims_have_exactly_one_winner() {
    let mut env = Env::new();
    let account = env.account("acme", "").await;
    let bearer = env.bearer(&account, "swarm", "agent", ALL).await;
    let setup = env.client(Via::Http, &bearer).await;
    let space = space(&setup, "Race").await;
    let id = item(&setup, &space, "Contended").await;
    let first = env.served().await.url("/mcp");
    let second = env.second_server().await;
    let urls = [first, second.url("/mcp")];
    let clients = join_all((0..100).map(|i| Client::http(&urls[i % 2], &bearer))).await;
    let results = join_all(clients.iter().enumerate().map(|(i, client)| {
        let id = id.clone();
        async move { client.call("work_claim", json!({"item_id": id, "claimant": format!("agent {i}")})).await }
    }))
    .await;
    let winners: Vec<usize> = (0..100).filter(|i| results[*i].is_error != Some(true)).collect();
    assert_eq!(winners.len(), 1, "exactly one claim wins");
    let winner = format!("agent {}", winners[0]);
    for (i, result) in results.iter().enumerate() {
        if i == winners[0] {
            continue;
        }
        let error = &result.structured_content.as_ref().unwrap()["error"];
        assert_eq!(error["code"], "conflict");
        assert_eq!(error["details"]["holder"], winner.as_str(), "every refusal names the winner");
    }
    let held = setup.ok("work_list", json!({"claimed_by": winner})).await;
    assert_eq!(held["items"][0]["id"], id.as_str());
    for client in clients {
        client.close().await;
    }
    setup.close().await;
}

#[tokio::test]
async fn tokens_made_at_once_for_one_new_principal_share_that_principal() {
    let env = Env::new();
    let account = env.account("acme", "").await;
    let made = join_all((0..6).map(|_| env.token(&account, "night shift", "agent", ALL))).await;
    let principals: std::collections::BTreeSet<&str> =
        made.iter().map(|token| token["principal_id"].as_str().expect("a principal id")).collect();
    assert_eq!(principals.len(), 1, "one principal for all six tokens: {made:?}");
    let tokens: std::collections::BTreeSet<&str> = made.iter().map(|token| token["token"].as_str().unwrap()).collect();
    assert_eq!(tokens.len(), 6, "six distinct tokens");
}
