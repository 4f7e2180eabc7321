//! Tokens and scopes over HTTP: 401 challenges and the protected-resource metadata, revocation, `tools/list` filtered
//! by scope, the scope matrix (every tool with and without every scope), and other accounts' data as `not_found`.

use serde_json::{Value, json};

use crate::support::{ALL, Env, Via, item, space};

const READ_TOOLS: [&str; 7] = [
    "decisions_get_document",
    "decisions_list_documents",
    "decisions_list_spaces",
    "work_get",
    "work_list",
    "work_ready",
    "work_status",
];
const WRITE_TOOLS: [&str; 10] = [
    "decisions_create_document",
    "decisions_create_space",
    "decisions_update_document",
    "work_claim",
    "work_claim_next",
    "work_create",
    "work_handoff",
    "work_heartbeat",
    "work_record_evidence",
    "work_update",
];

async fn post(url: &str, bearer: Option<&str>) -> reqwest::Response {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(bearer) = bearer {
        request = request.bearer_auth(bearer);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn missing_bad_and_revoked_tokens_get_401_with_the_metadata_challenge() {
    let mut env = Env::new();
    let account = env.account("acme", "").await;
    let made = env.token(&account, "ci", "service", ALL).await;
    let served = env.served().await;
    let (mcp, base) = (served.url("/mcp"), served.base.clone());

    let none = post(&mcp, None).await;
    assert_eq!(none.status(), 401);
    let challenge = none.headers()["www-authenticate"].to_str().unwrap().to_owned();
    assert_eq!(challenge, format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""));
    let bad = post(&mcp, Some("cairn_01J9Z3K6Q8V2M4N7P1R5S0T2XA_forged")).await;
    assert_eq!(bad.status(), 401);
    assert!(bad.headers()["www-authenticate"].to_str().unwrap().ends_with(", error=\"invalid_token\""));

    let bearer = made["token"].as_str().unwrap();
    assert_eq!(post(&mcp, Some(bearer)).await.status(), 200);
    let huge = reqwest::Client::new()
        .post(&mcp)
        .bearer_auth(bearer)
        .header("content-type", "application/json")
        .body(vec![b' '; 2 * 1024 * 1024])
        .send()
        .await
        .unwrap();
    assert_eq!(huge.status(), 413);
    env.cli(&["token", "revoke", made["token_id"].as_str().unwrap()]).await;
    // Revoked by another process: refused on the next request on SQLite; on PostgreSQL once the server's changes
    // listener heard of it (milliseconds; its token cache would otherwise keep the token 30 s).
    let revoked_at = std::time::Instant::now();
    while post(&mcp, Some(bearer)).await.status() != 401 {
        assert!(env.is_postgres(), "on SQLite a revoked token is refused at once");
        assert!(revoked_at.elapsed() < std::time::Duration::from_secs(10), "the revoked token is still accepted");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    let metadata: Value = reqwest::get(format!("{base}/.well-known/oauth-protected-resource/mcp"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["resource"], format!("{base}/mcp"));
    assert_eq!(metadata["scopes_supported"], json!(["mcp:read", "mcp:write", "decisions:read", "decisions:write"]));
    let health = reqwest::get(format!("{base}/healthz")).await.unwrap();
    assert_eq!(health.status(), 200, "healthz needs no token");
    let foreign = reqwest::Client::new().post(&mcp).header("origin", "https://evil.example").send().await.unwrap();
    assert_eq!(foreign.status(), 403, "a foreign Origin is refused");
}

#[tokio::test]
async fn tools_list_and_calls_follow_the_scopes_of_the_token() {
    let mut env = Env::new();
    let account = env.account("acme", "").await;
    let cases = [
        ("mcp:read", &[][..]),
        ("decisions:read", &[][..]),
        ("mcp:read,decisions:read", &READ_TOOLS[..]),
        ("mcp:write", &[][..]),
        ("decisions:write", &[][..]),
        ("mcp:read,decisions:write", &READ_TOOLS[..]),
        ("mcp:write,decisions:write", &[&READ_TOOLS[..], &WRITE_TOOLS[..]].concat()[..]),
        (ALL, &[&READ_TOOLS[..], &WRITE_TOOLS[..]].concat()[..]),
    ];
    for (scopes, allowed) in cases {
        let bearer = env.bearer(&account, &format!("agent {scopes}"), "agent", scopes).await;
        let client = env.client(Via::Http, &bearer).await;
        let mut expected: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
        expected.sort();
        assert_eq!(client.tool_names().await, expected, "tools/list for {scopes}");
        for tool in READ_TOOLS.iter().chain(WRITE_TOOLS.iter()) {
            let result = client.call(tool, json!({})).await;
            let code = result.structured_content.as_ref().map(|c| c["error"]["code"].clone()).unwrap_or_default();
            if allowed.contains(tool) {
                assert_ne!(code, "insufficient_scope", "{tool} with {scopes}");
            } else {
                assert_eq!(code, "insufficient_scope", "{tool} with {scopes}");
                let error = &result.structured_content.unwrap()["error"];
                let needed = if READ_TOOLS.contains(tool) {
                    json!(["mcp:read", "decisions:read"])
                } else {
                    json!(["mcp:write", "decisions:write"])
                };
                assert_eq!(error["details"]["needed"], needed);
                let has: Vec<&str> = scopes.split(',').collect();
                let mut sorted = has.clone();
                sorted.sort_by_key(|s| ["mcp:read", "mcp:write", "decisions:read", "decisions:write"].iter().position(|x| x == s));
                assert_eq!(error["details"]["has"], json!(sorted));
                assert!(error["message"].as_str().unwrap().starts_with(&format!("{tool} needs scopes ")));
            }
        }
        client.close().await;
    }
}

#[tokio::test]
async fn read_only_tokens_are_refused_writes_over_stdio_too() {
    let mut env = Env::new();
    let account = env.account("acme", "").await;
    let bearer = env.bearer(&account, "reader", "agent", "mcp:read,decisions:read").await;
    let client = env.client(Via::Stdio, &bearer).await;
    let names = client.tool_names().await;
    assert_eq!(names, READ_TOOLS.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    let error = client.fail("work_update", json!({"item_id": "wi_x", "state": "done"}), "insufficient_scope").await;
    assert_eq!(
        error["message"],
        "work_update needs scopes mcp:write, decisions:write; this token has mcp:read, decisions:read"
    );
    client.close().await;
    let refused = env.cli_fails(&["mcp", "--token", "cairn_01J9Z3K6Q8V2M4N7P1R5S0T2XA_forged"]).await;
    assert!(refused.contains("CAIRN_TOKEN is not a valid token"), "{refused}");
}

#[tokio::test]
async fn another_accounts_data_is_not_found() {
    let mut env = Env::new();
    let acme = env.account("acme", "").await;
    let globex = env.account("globex", "").await;
    let mine = env.bearer(&acme, "Ada", "person", ALL).await;
    let theirs = env.bearer(&globex, "Hank", "person", ALL).await;
    let (mine, theirs) = (env.client(Via::Http, &mine).await, env.client(Via::Http, &theirs).await);
    let space = space(&mine, "Secret").await;
    let id = item(&mine, &space, "Secret work").await;
    theirs.fail("work_claim", json!({"item_id": id, "claimant": "Hank"}), "not_found").await;
    theirs.fail("work_claim", json!({"account_id": acme, "item_id": id, "claimant": "Hank"}), "not_found").await;
    theirs.fail("work_list", json!({"account_id": acme}), "not_found").await;
    theirs.fail("work_list", json!({"space_id": space}), "not_found").await;
    theirs.fail("work_create", json!({"space_id": space, "title": "x"}), "not_found").await;
    theirs.fail("decisions_list_documents", json!({"space_id": space}), "not_found").await;
    assert!(theirs.ok("work_list", json!({})).await["items"].as_array().unwrap().is_empty());

    // A membership opens the account; a reader may read but not write.
    let hank = env.token(&globex, "Hank", "person", ALL).await;
    env.cli(&["account", "add-member", "--account", &acme, "--principal-id", hank["principal_id"].as_str().unwrap(), "--role", "reader"]).await;
    assert_eq!(theirs.ok("work_list", json!({"account_id": acme})).await["items"].as_array().unwrap().len(), 1);
    theirs.fail("work_claim", json!({"account_id": acme, "item_id": id, "claimant": "Hank"}), "permission_denied").await;
    mine.close().await;
    theirs.close().await;
}
