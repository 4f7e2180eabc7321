//! The security headers on every kind of answer of `cairn serve`: a page, a REST route, an MCP endpoint, a refusal.
//! (`browser.rs` shows that the pages, live updates and forms work under the Content-Security-Policy.)

use serde_json::json;

use crate::support::{http, start};

/// The policy the pages are served with.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; \
    form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

fn assert_hardened(response: &reqwest::Response, what: &str) {
    let headers = response.headers();
    let expected = [
        ("content-security-policy", CSP),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "same-origin"),
        ("x-frame-options", "DENY"),
        ("cross-origin-opener-policy", "same-origin"),
        ("cross-origin-resource-policy", "same-origin"),
    ];
    for (name, value) in expected {
        assert_eq!(headers.get(name).and_then(|v| v.to_str().ok()), Some(value), "{name} on {what}");
    }
}

#[tokio::test]
async fn pages_rest_mcp_and_refusals_carry_the_security_headers() {
    let env = start().await;
    let client = http();

    let page = client.get(env.served.url("/workflows")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    assert_hardened(&page, "a page");
    let html = page.text().await.unwrap();
    assert!(html.contains(r#"<script src="/assets/htmx.min.js">"#), "scripts come from files: {html}");
    assert!(!html.contains("<script>") && !html.contains(" style="), "nothing inline: {html}");

    let asset = client.get(env.served.url("/assets/htmx.min.js")).send().await.unwrap();
    assert_hardened(&asset, "a script");

    let rest = client.get(env.served.url("/api/workflows?project=global")).send().await.unwrap();
    assert_eq!(rest.status(), 200);
    assert_hardened(&rest, "a REST answer");

    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "headers-test", "version": "1"}}});
    let mcp = client
        .post(env.served.url("/roscoe/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status(), 200);
    assert_hardened(&mcp, "an MCP answer");

    let unauthorized = client.post(env.served.url("/mcp")).json(&initialize).send().await.unwrap();
    assert_eq!(unauthorized.status(), 401);
    assert_hardened(&unauthorized, "a 401 of /mcp");
    let foreign = client.get(env.served.url("/")).header("host", "evil.example").send().await.unwrap();
    assert_eq!(foreign.status(), 403);
    assert_hardened(&foreign, "a 403 of the Host guard");
    let missing = client.get(env.served.url("/no/such/page")).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    assert_hardened(&missing, "a 404");
}
