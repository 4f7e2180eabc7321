//! The browser tests: `browser.mjs`, `decide.mjs`, `home.mjs`, `settings.mjs`, `editor.mjs`, `cross_port.mjs`,
//! `runs_list.mjs`, `live_log.mjs` and `axe.mjs` (Node + playwright-core + Debian chromium) against a real `cairn
//! serve`.
//!
//! `.ci/run` installs chromium and playwright-core (under `target/web-test`) first; a developer machine without
//! them skips these tests with a note, but in CI (`CI=true`) a missing tool fails them. Screenshots go to
//! `target/web-artifacts/` (or `$WEB_ARTIFACTS`).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::{Mcp, http, json_of, start, start_serving, start_with, token, token_as};

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Chromium, playwright-core's folder and the screenshot folder; `None` (a skip) where they are not installed and
/// this is not CI.
fn tools() -> Option<(PathBuf, PathBuf, PathBuf)> {
    let chromium = PathBuf::from(std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()));
    let playwright = std::env::var("PLAYWRIGHT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| workspace_root().join("target/web-test"));
    let node = std::process::Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    let ready = chromium.is_file()
        && ["playwright-core", "axe-core"].iter().all(|p| playwright.join("node_modules").join(p).is_dir())
        && node;
    if !ready {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI must install chromium, node, playwright-core and axe-core ({}, {})",
            chromium.display(),
            playwright.display()
        );
        eprintln!("skipped: the browser test needs {} and playwright-core and axe-core in {}", chromium.display(), playwright.display());
        return None;
    }
    let artifacts = std::env::var("WEB_ARTIFACTS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| workspace_root().join("target/web-artifacts"));
    std::fs::create_dir_all(&artifacts).unwrap();
    Some((chromium, playwright, artifacts))
}

/// Runs `script` (a file beside this one) with `vars`; asserts every check passed, and returns what it printed.
async fn run_script(script: &str, vars: &[(&str, String)]) -> String {
    let Some((chromium, playwright, artifacts)) = tools() else { return String::new() };
    let mut command = tokio::process::Command::new("node");
    command
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/web").join(script))
        .env("PLAYWRIGHT_DIR", &playwright)
        .env("CHROMIUM", &chromium)
        .env("ARTIFACTS", &artifacts);
    for (name, value) in vars {
        command.env(name, value);
    }
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{script} failed:\n{stdout}\n{stderr}");
    assert!(stdout.lines().last().is_some_and(|l| l.ends_with("passed, 0 failed")), "{stdout}");
    stdout.into_owned()
}

#[tokio::test]
async fn a_person_follows_a_run_live_decides_it_and_sees_a_claim_on_the_board() {
    if tools().is_none() {
        return;
    }
    let env = start().await;
    let vars = [("CAIRN_BASE", env.served.base.clone()), ("CAIRN_TOKEN", token(&env))];
    run_script("browser.mjs", &vars).await;
    let artifacts = tools().unwrap().2;
    for shot in ["run-page.png", "run-completed.png", "work-board.png"] {
        assert!(artifacts.join(shot).is_file(), "{shot} saved");
    }
}

#[tokio::test]
async fn a_decision_made_in_the_browser_is_recorded_with_the_signed_in_person() {
    if tools().is_none() {
        return;
    }
    let env = start_with(&["--require-auth"]).await;
    let agent = token_as(&env, "drafter", "agent", "roscoe:run");
    let ada = token_as(&env, "Ada", "person", "roscoe:run");
    let client = http();
    let url = |p: &str| env.served.url(p);
    let started = json_of(client.post(url("/api/runs?project=global")).bearer_auth(&agent).json(&json!({"workflowId": "ship"}))).await;
    let run_id = started["runId"].as_str().unwrap().to_owned();
    // The agent step is answered over MCP by the agent's token.
    let roscoe = Mcp::connect(url("/roscoe/mcp"), &agent).await;
    let answer = json!({"global": true, "run_id": run_id, "node_id": "draft", "response": "A haiku"});
    let advanced = roscoe.ok("advance_run", answer).await;
    assert_eq!(advanced["pendingStep"]["nodeType"], "human", "{advanced}");

    let run_path = format!("/runs/{run_id}?project=global");
    let vars = [
        ("CAIRN_BASE", env.served.base.clone()),
        ("RUN_PATH", run_path),
        ("PERSON_TOKEN", ada.clone()),
        ("PERSON", "Ada (person)".to_owned()),
    ];
    run_script("decide.mjs", &vars).await;

    let history = json_of(client.get(url(&format!("/api/runs/{run_id}?project=global"))).bearer_auth(&agent)).await;
    assert_eq!(history["run"]["status"], "completed", "{history}");
    assert_eq!(history["run"]["startedBy"], "drafter (agent)");
    let ask = history["nodes"].as_array().unwrap().iter().find(|n| n["nodeId"] == "ask").unwrap();
    assert_eq!(ask["output"]["principal"], "Ada (person)", "{ask}");
    assert_eq!(ask["output"]["decidedBy"], "web");
    let decided: Vec<&Value> = history["actions"].as_array().unwrap().iter().filter(|a| a["action"] == "decide").collect();
    assert_eq!(decided.len(), 1, "{history}");
    assert_eq!((decided[0]["principal"].as_str(), decided[0]["via"].as_str()), (Some("Ada (person)"), Some("web")));
}

#[tokio::test]
async fn the_home_inbox_lists_decisions_of_every_workspace_and_answers_them() {
    if tools().is_none() {
        return;
    }
    let (env, repo) = start_serving("shop").await;
    let client = http();
    let url = |p: &str| env.served.url(p);
    let global = json_of(client.post(url("/api/runs?project=global")).json(&json!({"workflowId": "decide"}))).await;
    let roscoe = Mcp::connect(url("/roscoe/mcp"), &token_as(&env, "drafter", "agent", "roscoe:run")).await;
    let started = roscoe.ok("start_workflow", json!({"cwd": repo.to_string_lossy(), "id": "decide"})).await;
    let project_run = started["runId"].as_str().unwrap().to_owned();
    let project_id = started["url"].as_str().unwrap().rsplit("project=").next().unwrap().to_owned();
    let vars = [
        ("CAIRN_BASE", env.served.base.clone()),
        ("GLOBAL_RUN", global["runId"].as_str().unwrap().to_owned()),
        ("PROJECT_RUN", project_run.clone()),
    ];
    run_script("home.mjs", &vars).await;
    let answered = json_of(client.get(url(&format!("/api/runs/{project_run}?project={project_id}")))).await;
    assert_eq!(answered["run"]["status"], "completed", "{answered}");
    let ask = answered["nodes"].as_array().unwrap().iter().find(|n| n["nodeId"] == "ask").unwrap();
    assert_eq!(ask["output"]["choice"], "ship", "{ask}");
    assert_eq!(ask["output"]["decidedBy"], "web");
}

#[tokio::test]
async fn an_account_owner_sees_the_settings_and_creates_and_revokes_tokens() {
    if tools().is_none() {
        return;
    }
    let env = start_with(&["--require-auth"]).await;
    let yaml = "models:\n  default: claude-haiku-4-5\npricing:\n  claude-haiku-4-5: { input: 3.0, output: 15.0 }\n";
    std::fs::write(env.home.join("roscoe.yaml"), yaml).unwrap();
    let owner = token_as(&env, "Ada", "person", "admin,roscoe:read,mcp:read,mcp:write,decisions:read,decisions:write");
    let victim = token_as(&env, "old-bot", "agent", "roscoe:run");
    let victim_id = format!("tok_{}", &victim["cairn_".len().."cairn_".len() + 26]);
    let client = http();
    let runs = env.served.url("/api/runs?project=global");
    assert_eq!(client.get(&runs).bearer_auth(&victim).send().await.unwrap().status(), 200, "the token works at first");
    let vars = [("CAIRN_BASE", env.served.base.clone()), ("OWNER_TOKEN", owner), ("VICTIM_ID", victim_id)];
    let printed = run_script("settings.mjs", &vars).await;
    assert_eq!(client.get(&runs).bearer_auth(&victim).send().await.unwrap().status(), 401, "revoked in the browser, refused");
    let made = printed.lines().find_map(|l| l.strip_prefix("NEW_TOKEN ")).expect("the new token").to_owned();
    let work = env.served.url("/api/work/items");
    assert_eq!(client.get(&work).bearer_auth(&made).send().await.unwrap().status(), 200, "the token made in the browser works");
}

#[tokio::test]
async fn the_editor_marks_diagnostics_on_their_lines_and_saves_safely() {
    if tools().is_none() {
        return;
    }
    let env = start().await;
    run_script("editor.mjs", &[("CAIRN_BASE", env.served.base.clone())]).await;
    let saved = std::fs::read_to_string(env.home.join("workflows/ship.yaml")).unwrap();
    assert!(saved.contains("Write a sonnet") && !saved.contains("Drafting"), "{saved}");
    assert!(env.home.join("workflows/from-template.yaml").is_file(), "the new workflow is a file");
}

#[tokio::test]
async fn every_page_passes_axe_fits_700_px_and_is_reachable_by_keyboard() {
    if tools().is_none() {
        return;
    }
    let env = crate::crawl::populated().await;
    run_script("axe.mjs", &[("CAIRN_BASE", env.served.base.clone())]).await;
}

#[tokio::test]
async fn a_page_on_another_port_can_neither_cancel_a_run_nor_decide_through_a_signed_in_browser() {
    if tools().is_none() {
        return;
    }
    let env = start().await;
    let client = http();
    let runs = env.served.url("/api/runs?project=global");
    let mut ids = Vec::new();
    for _ in 0..3 {
        let started = json_of(client.post(&runs).json(&json!({"workflowId": "decide"}))).await;
        ids.push(started["runId"].as_str().unwrap().to_owned());
    }
    let vars = [
        ("CAIRN_BASE", env.served.base.clone()),
        ("RUN_CANCEL", ids[0].clone()),
        ("RUN_DECIDE", ids[1].clone()),
        ("RUN_CONTROL", ids[2].clone()),
        ("PERSON_TOKEN", token_as(&env, "Ada", "person", "roscoe:run")),
        ("PERSON", "Ada (person)".to_owned()),
    ];
    run_script("cross_port.mjs", &vars).await;
    let history = |id: &str| json_of(client.get(env.served.url(&format!("/api/runs/{id}?project=global"))));
    for id in &ids[..2] {
        let run = history(id).await;
        assert_eq!(run["run"]["status"], "paused", "the other port's requests changed nothing: {run}");
        assert!(run["actions"].as_array().unwrap().iter().all(|a| a["action"] != "decide" && a["action"] != "cancel"), "{run}");
    }
    let control = history(&ids[2]).await;
    assert_eq!(control["run"]["status"], "completed", "the browser's own decision: {control}");
}

/// A script that prints in colour, then a person's decision.
const ECHO: &str = "name: echo\ninitial: say\nnodes:\n  say:\n    type: script\n    config:\n      \
    command: printf '\\033[1;32mgreen %s\\033[0m\\n' hello\n    transitions: { success: ask, failure: $fail }\n  ask:\n    \
    type: human\n    config: { prompt: Fine?, labels: { ship: Ship it } }\n    transitions: { ship: $end, stop: $fail }\n";

#[tokio::test]
async fn the_runs_list_pages_and_searches_and_a_run_shows_its_log_its_comment_and_runs_again() {
    if tools().is_none() {
        return;
    }
    let env = start().await;
    std::fs::write(env.home.join("workflows/echo.yaml"), ECHO).unwrap();
    let client = http();
    let runs = env.served.url("/api/runs?project=global");
    let start_run = |body: Value| {
        let request = client.post(&runs).json(&body);
        async move { json_of(request).await["runId"].as_str().expect("a run id").to_owned() }
    };
    let input = json!({"greeting": "hi <there>", "count": 2});
    let echo = start_run(json!({"workflowId": "echo", "input": input})).await;
    let mut ids = vec![echo.clone()];
    for i in 0..32 {
        let body = if i % 3 == 0 {
            json!({"workflowId": "ship", "execution": "host"})
        } else {
            json!({"workflowId": "decide"})
        };
        ids.push(start_run(body).await);
    }
    let listed = json_of(client.get(env.served.url("/api/runs?project=global&limit=200"))).await;
    let newest_first: Vec<&str> = listed.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(newest_first.len(), 33, "{listed}");
    let ships = listed.as_array().unwrap().iter().filter(|r| r["workflowId"] == "ship").count();
    let vars = [
        ("CAIRN_BASE", env.served.base.clone()),
        ("ALL_RUNS", newest_first.join(",")),
        ("SHIP_RUNS", ships.to_string()),
        ("ECHO_RUN", echo.clone()),
    ];
    let printed = run_script("runs_list.mjs", &vars).await;
    let again = printed.lines().find_map(|l| l.strip_prefix("RUN_AGAIN ")).expect("the new run's id").to_owned();
    assert!(!ids.contains(&again), "Run again started a new run");
    let history = json_of(client.get(env.served.url(&format!("/api/runs/{again}?project=global")))).await;
    assert_eq!(history["run"]["workflowId"], "echo", "{history}");
    assert_eq!(history["run"]["context"]["input"], input, "the same input: {history}");
    let first = json_of(client.get(env.served.url(&format!("/api/runs/{echo}?project=global")))).await;
    let ask = first["nodes"].as_array().unwrap().iter().find(|n| n["nodeId"] == "ask").unwrap();
    assert_eq!(ask["output"]["comment"], "Looks right <to me>", "{ask}");
}

#[tokio::test]
async fn a_running_scripts_log_follows_it_live_in_the_browser() {
    if tools().is_none() {
        return;
    }
    let env = start().await;
    let gate = env.home.join("live-gate");
    let live = format!(
        "name: live\ninitial: talk\nnodes:\n  talk:\n    type: script\n    config:\n      command: |\n        \
         echo first\n        i=0\n        while [ ! -e '{}' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n        \
         echo second\n    transitions: {{ success: $end, failure: $fail }}\n",
        gate.display()
    );
    std::fs::write(env.home.join("workflows/live.yaml"), live).unwrap();
    // The start answers once the run stops (here: when the script ends), so it goes on beside the browser.
    let started = http().post(env.served.url("/api/runs?project=global")).json(&json!({"workflowId": "live"}));
    let starting = tokio::spawn(json_of(started));
    let list = env.served.url("/api/runs?project=global");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let run = loop {
        if let Some(id) = json_of(http().get(&list)).await[0]["id"].as_str() {
            break id.to_owned();
        }
        assert!(std::time::Instant::now() < deadline, "the run was never listed");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let vars = [
        ("CAIRN_BASE", env.served.base.clone()),
        ("LIVE_RUN", run),
        ("GATE", gate.display().to_string()),
    ];
    run_script("live_log.mjs", &vars).await;
    let ended = starting.await.unwrap();
    assert_eq!(ended["status"], "completed", "{ended}");
}
