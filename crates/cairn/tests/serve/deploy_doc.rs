//! docs/deploy.md's commands, run as the page writes them: its `sh` blocks in order, through `bash`, with `cairn` on
//! `PATH`. Only the database URL (the test's own database) and the port (`0`, so tests never race for 7777) are
//! substituted. Then what the page promises is checked: the node answers nothing without a token, the agent's token
//! claims a work item and starts a run whose link names the public URL, and the person's token signs in.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::database::TestDatabase;
use crate::rest::post_json;

/// The ```sh blocks of `markdown`, in order.
fn sh_blocks(markdown: &str) -> Vec<String> {
    tagged_sh_blocks(markdown).into_iter().map(|(_, block)| block).collect()
}

/// The ```sh blocks of `markdown`, in order, each with what follows `sh` on its opening line (```sh postgres: `postgres`).
pub fn tagged_sh_blocks(markdown: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, Vec<&str>)> = None;
    for line in markdown.lines() {
        let trimmed = line.trim();
        match &mut current {
            None => {
                if let Some(tag) = trimmed.strip_prefix("```sh").filter(|t| t.is_empty() || t.starts_with(' ')) {
                    current = Some((tag.trim().to_owned(), Vec::new()));
                }
            }
            Some((tag, lines)) if trimmed == "```" => {
                blocks.push((std::mem::take(tag), lines.join("\n")));
                current = None;
            }
            Some((_, lines)) => lines.push(trimmed),
        }
    }
    blocks
}

/// `bash -c block` with `cairn` (this build) first on `PATH`, `CAIRN_HOME` set to `home`, in the folder that holds
/// `home` (where relative file names land).
pub fn bash(block: &str, bin: &Path, home: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("bash");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    command
        .args(["-euo", "pipefail", "-c", block])
        .env("PATH", path)
        .env("CAIRN_HOME", home)
        .current_dir(home.parent().unwrap_or(home))
        .env_remove("CAIRN_DATABASE_URL")
        .env_remove("ROSCOE_PUBLIC_URL")
        .kill_on_drop(true);
    command
}

/// A folder for a page's commands: `home` (their `CAIRN_HOME`) and `bin` (holding `cairn`, this build) in it.
pub fn shell() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let tmp = tempfile::tempdir().unwrap();
    let (home, bin) = (tmp.path().join("home"), tmp.path().join("bin"));
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_cairn"), bin.join("cairn")).unwrap();
    (tmp, home, bin)
}

/// Runs `block` to its end; `database` is the `CAIRN_DATABASE_URL` the page says the shell has exported by then.
pub async fn run(block: &str, bin: &Path, home: &Path, database: Option<&str>) -> String {
    let mut command = bash(block, bin, home);
    if let Some(url) = database {
        command.env("CAIRN_DATABASE_URL", url);
    }
    let output = command.output().await.unwrap();
    assert!(output.status.success(), "{block}\n{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test]
async fn the_commands_of_deploy_md_work_as_written() {
    let (_tmp, home, bin) = shell();
    let database = TestDatabase::fresh();
    let url = database.url().map_or_else(|| format!("sqlite://{}/cairn.db", home.display()), str::to_owned);

    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/deploy.md")).unwrap();
    let blocks: Vec<String> = sh_blocks(&doc)
        .into_iter()
        .map(|b| b.replace("postgres://…", &url).replace(":7777", ":0"))
        .collect();
    assert_eq!(blocks.len(), 4, "migrate, serve, an agent's token, a person's token: {blocks:#?}");
    assert!(blocks[1].contains("cairn serve"), "{}", blocks[1]);

    run(&blocks[0], &bin, &home, None).await;
    let mut server = bash(&blocks[1], &bin, &home).stderr(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let port = loop {
        let line = lines.next_line().await.unwrap().expect("cairn serve exited before listening");
        if let Some((_, address)) = line.split_once("listening on http://") {
            break address.rsplit_once(':').unwrap().1.trim().to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let base = format!("http://127.0.0.1:{port}");
    let agent: Value = serde_json::from_str(&run(&blocks[2], &bin, &home, Some(&url)).await).unwrap();
    let person: Value = serde_json::from_str(&run(&blocks[3], &bin, &home, Some(&url)).await).unwrap();

    // Nothing without a token; the health check stays open for the load balancer.
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let anonymous = client.post(format!("{base}/roscoe/mcp")).header("host", "cairn.example.com").body("{}").send().await;
    assert_eq!(anonymous.unwrap().status(), 401);
    assert_eq!(client.get(format!("{base}/api/runs")).send().await.unwrap().status(), 401);
    assert_eq!(client.get(format!("{base}/runs")).send().await.unwrap().status(), 303, "pages ask for a sign-in");
    assert_eq!(client.get(format!("{base}/healthz")).send().await.unwrap().status(), 200);

    // The agent's token claims a work item over /mcp and starts a run whose link names the public URL.
    let token = agent["token"].as_str().unwrap();
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp")).auth_header(token.to_owned());
    let work = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
    let call = |tool: &str, args: Value| {
        let Value::Object(args) = args else { unreachable!() };
        CallToolRequestParams::new(tool.to_owned()).with_arguments(args)
    };
    let space = work.call_tool(call("decisions_create_space", json!({"name": "Deploy"}))).await.unwrap();
    let space = space.structured_content.unwrap();
    let item = work.call_tool(call("work_create", json!({"space_id": space["space"]["id"], "title": "Ship"}))).await;
    let item = item.unwrap().structured_content.unwrap();
    let claim = json!({"item_id": item["item"]["id"], "claimant": "build-agent"});
    let claimed = work.call_tool(call("work_claim", claim)).await.unwrap();
    assert_ne!(claimed.is_error, Some(true), "the documented agent token claims: {claimed:?}");
    let workflows = home.join("workflows");
    std::fs::create_dir_all(&workflows).unwrap();
    let decide = "name: decide\ninitial: ask\nnodes:\n  ask:\n    type: human\n    config: { prompt: Go? }\n    \
        transitions: { go: $end }\n";
    std::fs::write(workflows.join("decide.yaml"), decide).unwrap();
    let start = json!({"workflowId": "decide"});
    let started: Value = post_json(&client, format!("{base}/api/runs?project=global"), token, &start).await;
    assert!(started["url"].as_str().unwrap().starts_with("https://cairn.example.com/"), "{started}");

    // The person's token signs in.
    let page = client.get(format!("{base}/signin")).send().await.unwrap();
    let html = page.text().await.unwrap();
    let csrf = html.split("name=\"csrf\" value=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    let signed = client
        .post(format!("{base}/signin"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("csrf={csrf}&token={}", person["token"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(signed.status(), 303, "the documented person token signs in");
    let cookie = signed.headers()["set-cookie"].to_str().unwrap();
    assert!(cookie.contains("; Secure"), "behind the documented https public URL the sign-in cookie is Secure: {cookie}");
    let _ = work.cancel().await;
    let _ = server.kill().await;
}
