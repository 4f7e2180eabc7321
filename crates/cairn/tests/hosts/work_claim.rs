//! Scenario: through the plugin's `work` server, configured from the environment (`CAIRN_URL`, `CAIRN_TOKEN`), Claude
//! Code claims a work item on a running `cairn serve`.

use serde_json::{Value, json};
use tokio::process::Command;

use crate::anthropic::{Answer, Request, StandIn};
use crate::cairn_serve::Served;
use crate::claude_code::{ClaudeCode, plugin_dir};
use crate::database::TestDatabase;
use crate::rest::post_json;

#[tokio::test]
async fn claude_code_claims_a_work_item_with_the_token_from_its_environment() {
    let Some(claude) = ClaudeCode::find() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (home, project, server_home) = (tmp.path().join("home"), tmp.path().join("project"), tmp.path().join("server"));
    for dir in [&home, &project] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let database = TestDatabase::fresh();
    let mut serve = Command::new(env!("CARGO_BIN_EXE_cairn"));
    serve.arg("serve").env("CAIRN_HOME", &server_home);
    database.apply(&mut serve);
    let served = Served::start(serve).await;
    let mut create = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    create.args(["work", "token", "create", "--principal", "claude-code", "--kind", "agent", "--scopes", "mcp:write,decisions:write"]);
    create.env("CAIRN_HOME", &server_home);
    database.apply_std(&mut create);
    let made = create.output().unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let token = serde_json::from_slice::<Value>(&made.stdout).unwrap()["token"].as_str().unwrap().to_owned();
    let client = reqwest::Client::new();
    let space: Value = post_json(&client, served.url("/api/spaces"), &token, &json!({"name": "hosts"})).await;
    let item = json!({"space_id": space["space"]["id"], "title": "Wire cairn into Claude Code"});
    let item: Value = post_json(&client, served.url("/api/work/items"), &token, &item).await;
    let item_id = item["id"].as_str().unwrap().to_owned();

    let claim = item_id.clone();
    let model = StandIn::start(move |request: &Request| {
        if !request.has_tools() {
            return Answer::text("Claim a work item");
        }
        match request.last_tool_result() {
            None => Answer::tool("mcp__plugin_cairn_work__work_claim", json!({"item_id": claim, "claimant": "claude-code"})),
            Some(result) => Answer::text(format!("The claim answered: {result}")),
        }
    })
    .await;
    let plugin = plugin_dir();
    let args = ["--plugin-dir", plugin.to_str().unwrap()];
    let env = [("CAIRN_URL", served.base.as_str()), ("CAIRN_TOKEN", token.as_str())];
    let result = claude.run(&project, &home, &model.base, "Claim the work item for me.", &args, &env).await;
    assert!(result["result"].as_str().unwrap().contains("\"claimed\""), "{result}");

    let listed: Value = client.get(served.url("/api/work/items")).bearer_auth(&token).send().await.unwrap().json().await.unwrap();
    let held = listed["items"].as_array().unwrap().iter().find(|i| i["id"] == item_id.as_str()).unwrap().clone();
    assert_eq!((held["state"].as_str(), held["claimant"].as_str()), (Some("claimed"), Some("claude-code")), "{held}");
}
