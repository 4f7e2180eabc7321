//! Rate limits on the MCP endpoints and the REST API: over its budget a client (a token, or an address without one)
//! gets `429` with `Retry-After` and a JSON body, while other clients are still served; `X-Forwarded-For` counts only
//! when trusted. The budget here is one request a minute, so nothing refills while a test runs.

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
