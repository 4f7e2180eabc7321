//! `roscoe run` and `roscoe runs …` without a terminal: a human step left paused (exit 3) and answered with `roscoe
//! runs resume`, an AI step saying what it waits for, runs started over MCP listed, Ctrl-C cancelling a run and
//! stopping its script, a run started here answered in `cairn serve`, `--detach`, `--quiet` and usage errors.

use std::time::Duration;

use serde_json::json;

use crate::cli_support::RELEASE;
use crate::runs_support::{alive, eventually, write_workflow};
use crate::support::Env;

const DRAFT: &str = "name: draft\ninitial: write\nnodes:\n  write:\n    type: ai_agent\n    config: { prompt: \"Write a haiku\" }\n    transitions: { success: $end }\n";

#[tokio::test]
async fn a_human_step_without_a_terminal_waits_with_exit_3_and_runs_resume_answers_it() {
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "release", RELEASE);

    let paused = env.roscoe(&repo, &["run", "release", "--json"]).await;
    assert_eq!(paused.code, 3, "{paused:?}");
    let result = paused.json();
    let run_id = result["runId"].as_str().unwrap().to_owned();
    assert_eq!(result["status"], "paused");
    assert_eq!(result["pendingStep"]["nodeId"], "review");
    assert!(paused.stderr.contains(&format!("roscoe runs resume {run_id} <choice>")), "{}", paused.stderr);
    assert!(paused.stderr.contains(&format!("/open/runs/{run_id}")), "the web link: {}", paused.stderr);
    assert!(paused.stderr.contains("approve, reject"), "{}", paused.stderr);
    assert!(paused.stderr.contains("No `cairn serve` is running for this CAIRN_HOME"), "the link's note: {}", paused.stderr);

    // Without a terminal and without a choice, resume says again what the run waits for.
    let again = env.roscoe(&repo, &["runs", "resume", &run_id]).await;
    assert_eq!(again.code, 3, "{again:?}");
    assert!(again.stderr.contains("waits for a person at step 'review'"), "{}", again.stderr);

    let wrong = env.roscoe(&repo, &["runs", "resume", &run_id, "maybe"]).await;
    assert_eq!(wrong.code, 2, "an invalid choice is a usage error: {wrong:?}");
    assert!(wrong.stderr.contains("invalid_transition"), "{}", wrong.stderr);

    let done = env.roscoe(&repo, &["runs", "resume", &run_id, "approve", "--comment", "lgtm", "--json"]).await;
    assert_eq!(done.code, 0, "{done:?}");
    let result = done.json();
    assert_eq!(result["status"], "completed");
    assert_eq!(result["output"]["stdout"], "shipped\n");
    let shown = env.roscoe(&repo, &["runs", "show", &run_id]).await;
    assert!(shown.stdout.contains("completed") && shown.stdout.contains("review"), "{shown:?}");

    // Answering it again is refused at once, without the node lines of what the run did before.
    let twice = env.roscoe(&repo, &["runs", "resume", &run_id, "approve"]).await;
    assert_ne!(twice.code, 0, "{twice:?}");
    assert!(twice.stderr.starts_with("Error: "), "the error alone: {}", twice.stderr);
}

#[tokio::test]
async fn an_ai_step_ends_the_command_with_exit_3_saying_what_it_waits_for() {
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "draft", DRAFT);

    let ran = env.roscoe(&repo, &["run", "draft"]).await;
    assert_eq!(ran.code, 3, "{ran:?}");
    let stderr = &ran.stderr;
    assert!(stderr.contains("waits at step 'write' (ai_agent)"), "{stderr}");
    assert!(stderr.contains("no provider of this cairn serves") && stderr.contains("host agent"), "{stderr}");
    assert!(stderr.contains("roscoe runs resume") && stderr.contains("/open/runs/"), "{stderr}");
    assert!(ran.stdout.is_empty(), "{ran:?}");
}

#[tokio::test]
async fn runs_list_shows_runs_started_over_mcp() {
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "draft", DRAFT);
    let client = env.connect().await;
    let started = client.ok("start_workflow", json!({ "cwd": repo.to_str().unwrap(), "id": "draft" })).await;
    let run_id = started["runId"].as_str().unwrap();

    let listed = env.roscoe(&repo, &["runs", "list", "--json"]).await;
    assert_eq!(listed.code, 0, "{listed:?}");
    let runs = listed.json();
    let run = runs.as_array().unwrap().iter().find(|r| r["id"] == run_id).expect("the MCP run is listed");
    assert_eq!(run["source"], "mcp");
    assert_eq!(run["status"], "paused");

    let table = env.roscoe(&repo, &["runs", "list"]).await;
    assert!(table.stdout.starts_with("ID"), "a table with headers: {}", table.stdout);
    assert!(table.stdout.contains(run_id) && table.stdout.contains("mcp"), "{}", table.stdout);
    let ids = env.roscoe(env.tmp.path(), &["runs", "list", "--quiet", "--cwd", repo.to_str().unwrap()]).await;
    assert_eq!(ids.stdout.trim(), run_id, "--quiet lists ids only; --cwd names the project: {ids:?}");
    let global = env.roscoe(&repo, &["runs", "list", "--global", "--json"]).await;
    assert_eq!(global.json(), json!([]), "the project's run is not global");

    // And the other way round: the terminal answers nothing here, the host sees the same run.
    let status = client.ok("get_run_status", json!({ "cwd": repo.to_str().unwrap(), "runId": run_id })).await;
    assert_eq!(status["status"], "paused");
    client.service.cancel().await.unwrap();
}

#[tokio::test]
async fn ctrl_c_cancels_the_run_and_stops_its_script() {
    let env = Env::new();
    let repo = env.repo("project");
    let pid_file = repo.join("script.pid");
    let slow = "name: slow\ninitial: wait\nnodes:\n  wait:\n    type: script\n    config: { command: \"echo $$ > script.pid; sleep 60\" }\n    transitions: { success: $end, failure: $fail }\n";
    write_workflow(&repo, "slow", slow);

    let mut command = env.cli(env!("CARGO_BIN_EXE_roscoe"), &["run", "slow", "--json"]);
    command.current_dir(&repo).stdin(std::process::Stdio::null()).stdout(std::process::Stdio::piped());
    command.stderr(std::process::Stdio::piped());
    let child = command.spawn().unwrap();
    let script: u32 = eventually("the script to start", || {
        std::fs::read_to_string(&pid_file).ok().and_then(|t| t.trim().parse().ok())
    })
    .await;
    // SAFETY: a signal to the command this test started.
    unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGINT) };
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output()).await.unwrap().unwrap();

    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "a cancelled run exits 1: {stderr}");
    assert!(stderr.contains("Ctrl-C: cancelling run"), "{stderr}");
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["status"], "cancelled");
    assert_eq!(result["error"], "cancelled with Ctrl-C at the terminal");
    eventually("the script to be stopped", || (!alive(script)).then_some(())).await;

    // The run is cleanly cancelled for everyone: no runner left, nothing to answer.
    let run_id = result["runId"].as_str().unwrap();
    let shown = env.roscoe(&repo, &["runs", "show", run_id, "--json"]).await.json();
    assert_eq!(shown["status"], "cancelled");
    let history = env.roscoe(&repo, &["runs", "history", run_id, "--json"]).await.json();
    assert_eq!(history["nodes"][0]["status"], "cancelled");
    assert_eq!(history["actions"][1]["action"], "cancel");
}

#[tokio::test]
async fn detach_returns_the_run_id_at_once_and_the_run_goes_on() {
    let env = Env::new();
    let repo = env.repo("project");
    let gate = repo.join("go");
    let gated = "name: gated\ninitial: wait\nnodes:\n  wait:\n    type: script\n    config: { command: \"while [ ! -e go ]; do sleep 0.1; done; echo done\" }\n    transitions: { success: $end, failure: $fail }\n";
    write_workflow(&repo, "gated", gated);

    // The script cannot finish before the test lets it, so the command must have returned while it runs.
    let detached = env.roscoe(&repo, &["run", "gated", "--detach"]).await;
    assert_eq!(detached.code, 0, "{detached:?}");
    let run_id = detached.stdout.trim().to_owned();
    assert_eq!(run_id.len(), 26, "the run id alone on stdout: {detached:?}");
    assert!(detached.stderr.contains(&format!("roscoe runs watch {run_id}")), "{}", detached.stderr);
    let running = env.roscoe(&repo, &["runs", "show", &run_id, "--json"]).await.json();
    assert_eq!(running["status"], "running");

    std::fs::write(&gate, "").unwrap();
    let watched = env.roscoe(&repo, &["runs", "watch", &run_id, "--json"]).await;
    assert_eq!(watched.code, 0, "{watched:?}");
    assert_eq!(watched.json()["status"], "completed");
    assert!(watched.stderr.contains("wait"), "the watch shows the node: {}", watched.stderr);
}

#[tokio::test]
async fn quiet_keeps_stderr_empty_and_bad_command_lines_exit_2() {
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "hello", &crate::support::simple("hello"));

    let quiet = env.roscoe(&repo, &["run", "hello", "--quiet"]).await;
    assert_eq!((quiet.code, quiet.stderr.as_str()), (0, ""), "{quiet:?}");
    assert!(quiet.stdout.contains("\"stdout\": \"hi\\n\""), "the run's output on stdout: {quiet:?}");
    let plain = env.roscoe(&repo, &["run", "hello"]).await;
    assert!(!plain.stderr.contains('\x1b'), "no colours or spinner off a terminal: {:?}", plain.stderr);
    assert!(plain.stderr.contains("✓ step") && plain.stderr.contains("completed"), "{}", plain.stderr);

    for (args, says) in [
        (vec!["run", "hello", "--input", "{"], "--input is not valid JSON"),
        (vec!["run", "hello", "-i", "novalue"], "write -i key=value"),
        (vec!["run", "nope"], "run `roscoe workflows list` to see the ids in scope (not_found)"),
        (vec!["run", "nope", "--detach"], "(not_found)"),
        (vec!["run", "hello", "--cwd", "/no/such/dir"], "CWD_INVALID"),
        (vec!["runs", "show", "zzz"], "Run not found. (not_found)"),
        (vec!["run", "hello", "--cwd", "x", "--global"], "cannot be used with"),
    ] {
        let ran = env.roscoe(&repo, &args).await;
        assert_eq!(ran.code, 2, "{args:?}: {ran:?}");
        assert!(ran.stderr.contains(says), "{args:?}: {}", ran.stderr);
    }
}

#[tokio::test]
async fn a_run_started_in_the_terminal_is_answered_in_cairn_serve() {
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "release", RELEASE);
    // A server that does not serve the project: the link names it, and the result says how to serve it.
    let unserved = crate::cairn_serve::Served::start(env.cli(env!("CARGO_BIN_EXE_cairn"), &["serve"])).await;
    let elsewhere = env.roscoe(&repo, &["run", "release", "--json"]).await.json();
    let note = elsewhere["urlNote"].as_str().unwrap_or_default();
    assert!(note.contains("does not serve this project") && note.contains(&format!("--project {}", repo.display())), "{elsewhere}");
    let project = elsewhere["url"].as_str().unwrap().split("project=").nth(1).unwrap().to_owned();
    let api = unserved.url(&format!("/api/runs/{}?project={project}", elsewhere["runId"].as_str().unwrap()));
    assert_eq!(reqwest::get(&api).await.unwrap().status(), 404, "a project it does not serve is not found there");
    drop(unserved);

    let served = env.serve(&[], &[]).await;
    let paused = env.roscoe(&repo, &["run", "release", "--json"]).await;
    assert_eq!(paused.code, 3, "{paused:?}");
    let result = paused.json();
    assert!(result.get("urlNote").is_none(), "the server serves the project: {result}");
    let (run_id, url) = (result["runId"].as_str().unwrap(), result["url"].as_str().unwrap());
    assert!(url.starts_with(&served.base), "the link names the running server: {url}");
    let project = url.split("project=").nth(1).unwrap();

    let http = reqwest::Client::new();
    let api = served.url(&format!("/api/runs/{run_id}?project={project}"));
    let shown: serde_json::Value = http.get(&api).send().await.unwrap().json().await.unwrap();
    assert_eq!(shown["run"]["status"], "paused", "the server shows the terminal's run: {shown}");
    let resume = served.url(&format!("/api/runs/{run_id}/resume?project={project}"));
    let answered = http.post(resume).json(&json!({ "transition": "approve" })).send().await.unwrap();
    assert!(answered.status().is_success(), "{:?}", answered.text().await);

    let done = env.roscoe(&repo, &["runs", "show", run_id, "--json"]).await.json();
    assert_eq!(done["status"], "completed", "answered on the server, seen from the terminal");
    let history = env.roscoe(&repo, &["runs", "history", run_id, "--json"]).await.json();
    let review = history["nodes"].as_array().unwrap().iter().find(|n| n["nodeId"] == "review").unwrap();
    assert_eq!(review["output"]["decidedBy"], "web");
}

#[tokio::test]
async fn roscoe_run_waits_out_a_delay_and_goes_on() {
    let env = Env::new();
    let repo = env.repo("project");
    // A script after the wait: it runs in the background of the look that fires the timer, and the command waits
    // for it.
    let pause = "name: pause\ninitial: later\nnodes:\n  later:\n    type: script\n    config: { command: 'echo done', delayMs: 1500 }\n    transitions: { success: $end, failure: $fail }\n";
    write_workflow(&repo, "pause", pause);
    let done = env.roscoe(&repo, &["run", "pause", "--json"]).await;
    assert_eq!(done.code, 0, "{done:?}");
    assert_eq!(done.json()["status"], "completed", "{done:?}");
    assert_eq!(done.json()["output"]["stdout"], "done\n", "{done:?}");
    assert!(done.stderr.contains("waits until") && done.stderr.contains("delayMs"), "{}", done.stderr);
}
