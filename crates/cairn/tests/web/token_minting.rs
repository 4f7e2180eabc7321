//! Who may make and revoke tokens, over the settings page of a server that needs a sign-in: only a credential with
//! the `admin` scope of an account's owner, never with scopes beyond its own; being named in a token makes nobody an
//! owner (the account's first person is its owner, `cairn work account add-member --role owner` names others).

use regex::Regex;
use serde_json::Value;

use crate::support::{Browser, Env, http, start_with, token_as};

/// Every token of the server's database (`cairn work token list`).
fn tokens(env: &Env) -> Vec<Value> {
    let out = env.cairn().args(["work", "token", "list"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["tokens"].as_array().unwrap().clone()
}

/// The `tok_…` id of a bearer token.
fn id_of(bearer: &str) -> String {
    format!("tok_{}", &bearer["cairn_".len().."cairn_".len() + 26])
}

/// Whether `bearer` still works on the REST API.
async fn works(env: &Env, bearer: &str) -> bool {
    let answer = http().get(env.served.url("/api/work/items")).bearer_auth(bearer).send().await.unwrap();
    answer.status() == 200
}

const EVERY_SCOPE: &str = "roscoe:exec roscoe:write roscoe:run roscoe:read deepwork:write mcp:read mcp:write \
    decisions:read decisions:write metrics:read admin";
const WORK: &str = "mcp:read,mcp:write,decisions:read,decisions:write";

#[tokio::test]
async fn a_token_without_admin_neither_mints_nor_revokes() {
    let env = start_with(&["--require-auth"]).await;
    let alice = token_as(&env, "alice", "person", WORK);
    let scraper = token_as(&env, "prometheus", "service", "metrics:read");
    let before = tokens(&env).len();

    let mut browser = Browser::sign_in(&env, &scraper).await;
    let (status, page) = browser.get(&env, "/settings").await;
    assert_eq!(status, 200);
    assert!(page.contains(r#"id="tokens-need-admin""#), "the page says tokens need admin: {page}");
    assert!(!page.contains("data-account=") && !page.contains("/revoke"), "and offers nothing it may not do: {page}");

    let fields = [("account_id", "acc_local"), ("principal", "alice"), ("kind", "person"), ("scopes", EVERY_SCOPE)];
    let (status, page) = browser.post(&env, "/settings/tokens", &fields).await;
    assert_eq!(status, 403, "{page}");
    assert!(page.contains("POST /settings/tokens needs scopes admin; this token has metrics:read"), "{page}");
    let (status, page) = browser.post(&env, &format!("/settings/tokens/{}/revoke", id_of(&alice)), &[]).await;
    assert_eq!(status, 403, "{page}");
    assert!(page.contains("POST /settings/tokens/{id}/revoke needs scopes admin"), "{page}");

    assert_eq!(tokens(&env).len(), before, "no token was made");
    assert!(works(&env, &alice).await, "and alice's token still works");
}

#[tokio::test]
async fn an_admin_owner_mints_only_scopes_it_holds_and_naming_makes_no_owner() {
    let env = start_with(&["--require-auth"]).await;
    let ada = token_as(&env, "Ada", "person", "admin,mcp:read,mcp:write,decisions:read,decisions:write");
    let bob = token_as(&env, "Bob", "person", "admin,mcp:read,decisions:read");
    let bot = token_as(&env, "deploy-bot", "service", "admin,mcp:read,decisions:read");

    // Ada, the account's first person, owns it; her admin token mints within her own scopes only.
    let mut browser = Browser::sign_in(&env, &ada).await;
    let (_, page) = browser.get(&env, "/settings").await;
    assert!(page.contains(r#"data-account="acc_local""#), "Ada owns the account: {page}");
    assert!(page.contains(&format!(r#"data-token="{}""#, id_of(&bot))), "with its tokens: {page}");
    let wider = [("account_id", "acc_local"), ("principal", "ci"), ("kind", "service"), ("scopes", "mcp:read roscoe:exec admin")];
    let (status, page) = browser.post(&env, "/settings/tokens", &wider).await;
    assert_eq!(status, 403, "{page}");
    assert!(page.contains("a token holds only scopes its maker holds; yours lacks roscoe:exec: leave them out"), "{page}");
    let before = tokens(&env).len();
    let within = [("account_id", "acc_local"), ("principal", "ci"), ("kind", "service"), ("scopes", "mcp:read decisions:read")];
    let (status, page) = browser.post(&env, "/settings/tokens", &within).await;
    assert_eq!(status, 200, "{page}");
    let made = Regex::new(r#"id="new-token-value">(cairn_[^<]+)<"#).unwrap().captures(&page).expect("the new token")[1].to_owned();
    assert!(works(&env, &made).await, "the token Ada made works");
    assert_eq!(tokens(&env).len(), before + 1);

    // Bob (a second person) and the bot hold admin but own nothing: named in a token is not an owner.
    for (name, bearer) in [("Bob", &bob), ("deploy-bot", &bot)] {
        let mut browser = Browser::sign_in(&env, bearer).await;
        let (_, page) = browser.get(&env, "/settings").await;
        assert!(page.contains("You own no work account"), "{name} owns nothing: {page}");
        let fields = [("account_id", "acc_local"), ("principal", "Ada"), ("kind", "person"), ("scopes", "mcp:read")];
        let (status, page) = browser.post(&env, "/settings/tokens", &fields).await;
        assert_eq!(status, 403, "{name}: {page}");
        assert!(page.contains("only an owner of account &#39;acc_local&#39; makes its tokens"), "{page}");
        let (status, _) = browser.post(&env, &format!("/settings/tokens/{}/revoke", id_of(&ada)), &[]).await;
        assert_eq!(status, 403, "{name} revokes nothing");
    }
    assert!(works(&env, &ada).await);

    // Ownership is given explicitly; then the bot manages the account's tokens.
    let bot_principal = tokens(&env).into_iter().find(|t| t["principal"] == "deploy-bot").unwrap()["principal_id"].clone();
    let add = ["work", "account", "add-member", "--account", "acc_local", "--role", "owner", "--principal-id"];
    let out = env.cairn().args(add).arg(bot_principal.as_str().unwrap()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut browser = Browser::sign_in(&env, &bot).await;
    let (status, _) = browser.post(&env, &format!("/settings/tokens/{}/revoke", id_of(&made)), &[]).await;
    assert_eq!(status, 303, "an owner with admin revokes");
    assert!(!works(&env, &made).await, "the revoked token is refused");
}

#[tokio::test]
async fn the_local_person_of_a_loopback_server_manages_every_account() {
    let env = start_with(&[]).await;
    let agent = token_as(&env, "worker", "agent", WORK);
    let mut browser = Browser::default();
    let (_, page) = browser.get(&env, "/settings").await;
    assert!(page.contains(&format!(r#"data-token="{}""#, id_of(&agent))), "the local person sees every token: {page}");
    let fields = [("account_id", "acc_local"), ("principal", "nightly"), ("kind", "agent"), ("scopes", EVERY_SCOPE)];
    let (status, page) = browser.post(&env, "/settings/tokens", &fields).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains(r#"id="new-token-value""#), "{page}");
    let (status, _) = browser.post(&env, &format!("/settings/tokens/{}/revoke", id_of(&agent)), &[]).await;
    assert_eq!(status, 303);
    assert!(!works(&env, &agent).await, "revoked");
}
