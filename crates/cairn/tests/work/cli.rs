//! `cairn work account …` and `cairn work token …` as a script uses them: `--quiet` / `--format id` print only the
//! id so `ACC=$(cairn work account create … -q)` feeds the next command, `--format token` only the bearer token,
//! `account list` and `token list` (never a secret), `token revoke`, and a bad output option refused before anything
//! is made.

use serde_json::Value;

use crate::support::{ALL, Env, Via};

fn one_line(text: &str) -> &str {
    let line = text.strip_suffix('\n').expect("one line ending in a newline");
    assert!(!line.contains('\n'), "one line: {text:?}");
    line
}

#[tokio::test]
async fn creating_commands_print_only_the_id_and_lists_show_accounts_and_tokens_without_secrets() {
    let mut env = Env::new();
    let quiet = env.cli_text(&["account", "create", "--name", "Team", "--quiet"]).await;
    let account = one_line(&quiet).to_owned();
    assert!(account.starts_with("acc_"), "{quiet:?}");
    let other = env.cli_text(&["account", "create", "--name", "Other", "--format", "id"]).await;
    let other = one_line(&other).to_owned();

    // The printed id is usable as it is by the next command.
    let bearer = env
        .cli_text(&["token", "create", "--account", &account, "--principal", "ci", "--kind", "service", "--scopes", ALL, "--format", "token"])
        .await;
    let bearer = one_line(&bearer).to_owned();
    assert!(bearer.starts_with("cairn_"), "{bearer:?}");
    let token_id = env
        .cli_text(&["token", "create", "--account", &other, "--principal", "ada", "--kind", "person", "--scopes", "mcp:read,decisions:read", "-q"])
        .await;
    let token_id = one_line(&token_id).to_owned();
    assert!(token_id.starts_with("tok_"), "{token_id:?}");
    let client = env.client(Via::Http, &bearer).await;
    assert!(client.tool_names().await.contains(&"work_create".to_owned()), "the printed token works");
    client.close().await;

    let accounts = env.cli(&["account", "list"]).await;
    let names: Vec<&str> = accounts["accounts"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Team", "Other"], "{accounts}");
    assert_eq!(env.cli_text(&["account", "list", "-q"]).await, format!("{account}\n{other}\n"));

    let listed = env.cli_text(&["token", "list", "--json"]).await;
    let secret = bearer.splitn(3, '_').nth(2).unwrap();
    assert!(!listed.contains(secret), "token list never shows a secret: {listed}");
    let tokens: Value = serde_json::from_str(&listed).unwrap();
    let tokens = tokens["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 2, "{listed}");
    assert_eq!(tokens[0]["principal"], "ci");
    assert_eq!(tokens[0]["account_id"], account.as_str());
    assert_eq!(tokens[0]["status"], "active");
    assert_eq!(tokens[1]["token_id"], token_id.as_str());
    assert!(tokens.iter().all(|t| t.get("secret_hash").is_none()), "{listed}");
    assert_eq!(env.cli_text(&["token", "list", "--account", &other, "-q"]).await, format!("{token_id}\n"));

    assert_eq!(env.cli_text(&["token", "revoke", &token_id, "-q"]).await, format!("{token_id}\n"));
    let after = env.cli(&["token", "list", "--account", &other]).await;
    assert_eq!(after["tokens"][0]["status"], "revoked", "{after}");
    assert_ne!(after["tokens"][0]["revoked_at"], "", "{after}");
    let again = env.cli_fails(&["token", "revoke", &token_id]).await;
    assert!(again.contains("token list"), "the error points to the list: {again}");
}

#[tokio::test]
async fn bad_output_options_and_unknown_accounts_are_refused_before_anything_is_made() {
    let env = Env::new();
    let refused = env.cli_fails(&["account", "create", "--name", "Team", "--format", "token"]).await;
    assert!(refused.contains("--format token is only for `cairn work token create`"), "{refused}");
    let both = env.cli_fails(&["account", "create", "--name", "Team", "--quiet", "--json"]).await;
    assert!(both.contains("cannot be used with"), "{both}");
    assert_eq!(env.cli(&["account", "list"]).await["accounts"], serde_json::json!([]), "nothing was made");
    let unknown = env.cli_fails(&["token", "list", "--account", "acc_missing"]).await;
    assert!(unknown.contains("acc_missing"), "{unknown}");
}
