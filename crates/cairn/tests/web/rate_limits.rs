//! Rate limits on the MCP endpoints and the REST API: over its budget a client (a token, or an address without one)
//! gets `429` with `Retry-After` and a JSON body, while other clients are still served; `X-Forwarded-For` counts only
//! when trusted. The budget here is one request a minute, so nothing refills while a test runs; and under the
//! default budget 200 agents sharing one token all get to race for an item (protocol housekeeping is not counted).

use std::net::IpAddr;

use serde_json::Value;

use crate::support::{Env, start_with, token};

/// A client whose connections come from `address` (any address of 127.0.0.0/8 reaches the loopback server).
fn client_from(address: &str) -> reqwest::Client {
    let address: IpAddr = address.parse().unwrap();
    reqwest::Client::builder().local_address(address).build().unwrap()
}

/// Checks a 429: `Retry-After` in whole seconds, at most the minute the budget takes to refill, also in the body.
async fn assert_limited(response: reqwest::Response, whose: &str) {
    assert_eq!(response.status(), 429, "{whose}");
    let retry: u64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "Retry-After {retry}");
    assert!(response.headers().contains_key("content-security-policy"), "a 429 has the security headers");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "rate_limited", "{body}");
    assert_eq!(body["retry_after_seconds"], retry, "{body}");
    let message = body["error"].as_str().unwrap();
    assert!(message.contains(whose) && message.contains("at most 1 a minute"), "{message}");
}

async fn items(env: &Env, client: &reqwest::Client, bearer: &str) -> reqwest::Response {
    client.get(env.served.url("/api/work/items")).bearer_auth(bearer).send().await.unwrap()
}

#[tokio::test]
async fn a_token_or_address_over_its_budget_gets_429_while_others_are_served() {
    let env = start_with(&["--rate-limit", "1"]).await;
    let (first, second) = (token(&env), token(&env));
    let here = client_from("127.0.0.1");

    assert_eq!(items(&env, &here, &first).await.status(), 200);
    assert_limited(items(&env, &here, &first).await, "this token").await;
    assert_eq!(items(&env, &here, &second).await.status(), 200, "another token has a budget of its own");

    // Without a token, the address is the client; MCP endpoints count like the REST API.
    let roscoe = |client: &reqwest::Client| {
        client.post(env.served.url("/roscoe/mcp")).header("x-forwarded-for", "192.0.2.1").body("{}").send()
    };
    assert_ne!(roscoe(&here).await.unwrap().status(), 429);
    let refused = roscoe(&here).await.unwrap();
    assert_eq!(refused.headers()["connection"], "close", "a refused body closes the connection");
    assert_limited(refused, "this address").await;
    let other = client_from("127.0.0.2");
    assert_ne!(roscoe(&other).await.unwrap().status(), 429, "another address has a budget of its own");
    let spoofed = here.get(env.served.url("/api/workflows")).header("x-forwarded-for", "192.0.2.2").send().await;
    assert_limited(spoofed.unwrap(), "this address").await;

    // The pages are not limited.
    for _ in 0..3 {
        assert_eq!(here.get(env.served.url("/workflows")).send().await.unwrap().status(), 200);
    }
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_forwarded_address_is_the_client() {
    let env = start_with(&["--trust-forwarded-for", "--rate-limit", "1"]).await;
    let proxy = client_from("127.0.0.1");
    let from = |address: &'static str| {
        proxy.get(env.served.url("/api/workflows")).header("x-forwarded-for", format!("{address}, 127.0.0.1")).send()
    };
    // The proxy appends the address it saw last; that one counts.
    let via = |address: &'static str| {
        proxy.get(env.served.url("/api/workflows")).header("x-forwarded-for", format!("127.0.0.9, {address}")).send()
    };
    assert_eq!(via("192.0.2.1").await.unwrap().status(), 200);
    assert_limited(via("192.0.2.1").await.unwrap(), "this address").await;
    assert_eq!(via("192.0.2.2").await.unwrap().status(), 200, "another forwarded address has a budget of its own");
    assert_eq!(from("192.0.2.3").await.unwrap().status(), 200, "the first entry, which a client can write, is not it");
    assert_limited(from("192.0.2.4").await.unwrap(), "this address").await;
}

/// The JSON-RPC answer in `response`: its JSON body, or the first message of its event stream.
async fn answer_of(response: reqwest::Response) -> Value {
    let text = response.text().await.unwrap();
    if let Ok(value) = serde_json::from_str(&text) {
        return value;
    }
    let data = text.lines().filter_map(|line| line.strip_prefix("data:")).map(str::trim).find(|d| !d.is_empty());
    serde_json::from_str(data.unwrap_or_else(|| panic!("no message in {text}"))).unwrap()
}

/// One agent's whole visit to `/mcp`: initialize, the initialized notification, `work_claim` of `item` as
/// `claimant`, and the end of its session. Whether it claimed the item, and every status it was answered.
async fn claim_once(env: &Env, client: &reqwest::Client, bearer: &str, item: &str, claimant: &str) -> (bool, Vec<u16>) {
    let url = env.served.url("/mcp");
    let post = |body: Value, session: Option<&str>| {
        let mut request = client
            .post(&url)
            .bearer_auth(bearer)
            .header("Accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(session) = session {
            request = request.header("Mcp-Session-Id", session).header("MCP-Protocol-Version", "2025-06-18");
        }
        request.send()
    };
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": claimant, "version": "1"}}});
    let started = post(init, None).await.unwrap();
    let mut statuses = vec![started.status().as_u16()];
    let Some(session) = started.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned()) else {
        return (false, statuses);
    };
    answer_of(started).await;
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    statuses.push(post(initialized, Some(&session)).await.unwrap().status().as_u16());
    let claim = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "work_claim", "arguments": {"item_id": item, "claimant": claimant}}});
    let claimed = post(claim, Some(&session)).await.unwrap();
    statuses.push(claimed.status().as_u16());
    let won = claimed.status() == 200 && answer_of(claimed).await["result"]["isError"] != Value::Bool(true);
    let ended = client.delete(&url).bearer_auth(bearer).header("Mcp-Session-Id", &session).send().await.unwrap();
    statuses.push(ended.status().as_u16());
    (won, statuses)
}

#[tokio::test(flavor = "multi_thread")]
async fn two_hundred_agents_sharing_one_token_race_for_an_item_under_the_default_limit() {
    let env = start_with(&["--require-auth"]).await;
    let bearer = token(&env);
    let work = crate::support::Mcp::connect(env.served.url("/mcp"), &bearer).await;
    let space = work.ok("decisions_create_space", serde_json::json!({"name": "Race"})).await;
    let space_id = space["space"]["id"].as_str().unwrap().to_owned();
    let item = work.ok("work_create", serde_json::json!({"space_id": space_id, "title": "Only one"})).await;
    let item_id = item["item"]["id"].as_str().unwrap().to_owned();
    let client = reqwest::Client::new();
    let agents = (0..200).map(|n| {
        let (env, client, bearer, item_id) = (&env, &client, &bearer, &item_id);
        async move { claim_once(env, client, bearer, item_id, &format!("agent-{n}")).await }
    });
    let visits = futures::future::join_all(agents).await;
    let limited: Vec<_> = visits.iter().filter(|(_, statuses)| statuses.contains(&429)).collect();
    assert!(limited.is_empty(), "{} agents were rate limited: {:?}", limited.len(), limited.first());
    let odd: Vec<_> = visits.iter().filter(|(_, statuses)| statuses.len() != 4).collect();
    assert!(odd.is_empty(), "every agent got through its visit: {:?}", odd.first());
    assert_eq!(visits.iter().filter(|(won, _)| *won).count(), 1, "exactly one agent claimed the item");
    let listed = work.ok("work_list", serde_json::json!({"space_id": space_id})).await;
    assert!(listed.to_string().contains("\"agent-"), "the item is held by one of them: {listed}");
}
