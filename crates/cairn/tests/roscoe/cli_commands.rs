//! `roscoe workflows …`, `roscoe test`, `roscoe docs …`, `roscoe runs cancel | retry`: the authoring, test and docs
//! tools from a terminal, tables by default and the tools' shapes with `--json`.

use serde_json::json;

use crate::cli_support::RELEASE;
use crate::runs_support::write_workflow;
use crate::support::Env;

#[tokio::test]
async fn workflows_are_listed_shown_validated_linted_and_drawn() {
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "release", RELEASE);
    write_workflow(&repo, "broken", "name: broken\ninitial: a\nnodes:\n  a:\n    type: script\n    transitions: { success: nowhere }\n");

    let table = env.roscoe(&repo, &["workflows", "list"]).await;
    assert_eq!(table.code, 0, "{table:?}");
    assert!(table.stdout.contains("release") && table.stdout.contains("Builds, checks, asks, ships"), "{table:?}");
    let listed = env.roscoe(&repo, &["workflows", "list", "--json"]).await.json();
    let ids: Vec<_> = listed.as_array().unwrap().iter().map(|w| w["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["broken", "release"]);

    let shown = env.roscoe(&repo, &["workflows", "show", "release"]).await;
    assert_eq!(shown.stdout, RELEASE, "the file as written: {shown:?}");
    assert_eq!(env.roscoe(&repo, &["workflows", "show", "release", "--json"]).await.json()["initial"], "build");

    let valid = env.roscoe(&repo, &["workflows", "validate", "release"]).await;
    assert_eq!(valid.code, 0, "{valid:?}");
    assert!(valid.stderr.contains("release is valid"), "{valid:?}");
    let invalid = env.roscoe(&repo, &["workflows", "validate", "broken", "--json"]).await;
    assert_eq!(invalid.code, 1, "{invalid:?}");
    assert_eq!(invalid.json()["valid"], false);
    let file = repo.join(".roscoe/workflows/release.yaml");
    let from_file = env.roscoe(env.tmp.path(), &["workflows", "lint", file.to_str().unwrap(), "--json"]).await;
    assert_eq!(from_file.code, 0, "a YAML file is linted as given: {from_file:?}");
    assert_eq!(from_file.json()["errors"], json!([]));

    let diagram = env.roscoe(&repo, &["workflows", "diagram", "release"]).await;
    assert!(diagram.stdout.starts_with("flowchart TD"), "Mermaid text: {diagram:?}");
    assert!(diagram.stdout.contains("review") && diagram.stdout.contains("approve"), "{diagram:?}");
}

#[tokio::test]
async fn a_workflow_is_tested_on_mocks_from_a_file() {
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "release", RELEASE);
    let mocks = repo.join("mocks.json");
    std::fs::write(&mocks, json!({ "review": { "transition": "approve" } }).to_string()).unwrap();

    let passed = env.roscoe(&repo, &["test", "release", "--mocks", mocks.to_str().unwrap(), "--json"]).await;
    assert_eq!(passed.code, 0, "{passed:?}");
    let outcome = passed.json();
    assert_eq!((outcome["ok"].clone(), outcome["finalStatus"].clone()), (json!(true), json!("completed")));
    let trace: Vec<_> = outcome["nodeTrace"].as_array().unwrap().iter().map(|n| n["nodeId"].clone()).collect();
    assert_eq!(trace, [json!("build"), json!("check"), json!("review"), json!("ship")]);

    let missing = env.roscoe(&repo, &["test", "release"]).await;
    assert_eq!(missing.code, 1, "{missing:?}");
    assert!(missing.stderr.contains("missing_mock") && missing.stderr.contains("review"), "{}", missing.stderr);
    let listed = env.roscoe(&repo, &["runs", "list", "--json"]).await.json();
    assert_eq!(listed, json!([]), "test runs are never listed");
}

#[tokio::test]
async fn runs_are_cancelled_and_retried() {
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "release", RELEASE);
    let run_id = env.roscoe(&repo, &["run", "release", "--json"]).await.json()["runId"].as_str().unwrap().to_owned();

    let cancelled = env.roscoe(&repo, &["runs", "cancel", &run_id, "--reason", "not today"]).await;
    assert_eq!(cancelled.code, 0, "{cancelled:?}");
    assert!(cancelled.stderr.contains("is cancelled"), "{cancelled:?}");
    let again = env.roscoe(&repo, &["runs", "cancel", &run_id]).await;
    assert_eq!(again.code, 1, "{again:?}");
    assert!(again.stderr.contains("Run is already cancelled. (terminal)"), "the tool's text and code: {again:?}");

    let retried = env.roscoe(&repo, &["runs", "retry", &run_id, "--json"]).await;
    assert_eq!(retried.code, 3, "retried up to the human step again: {retried:?}");
    assert_eq!(retried.json()["pendingStep"]["nodeId"], "review");
}

#[tokio::test]
async fn the_docs_are_listed_searched_and_shown() {
    let env = Env::new();
    let listed = env.roscoe(env.tmp.path(), &["docs", "list", "--json"]).await;
    assert_eq!(listed.code, 0, "{listed:?}");
    let pages = listed.json();
    let slugs: Vec<&str> = pages.as_array().unwrap().iter().map(|p| p["slug"].as_str().unwrap()).collect();
    assert!(slugs.contains(&"guides/testing-workflows") && slugs.contains(&"reference/cli"), "{slugs:?}");
    let quiet = env.roscoe(env.tmp.path(), &["docs", "list", "-q"]).await;
    assert_eq!(quiet.stdout.lines().collect::<Vec<_>>(), slugs, "-q prints the slugs, one a line");

    let found = env.roscoe(env.tmp.path(), &["docs", "search", "test workflow mocks", "--json"]).await;
    assert_eq!(found.code, 0, "{found:?}");
    let hits = found.json();
    assert!(hits.as_array().unwrap().iter().any(|h| h["slug"] == "guides/testing-workflows"), "{hits}");

    let page = env.roscoe(env.tmp.path(), &["docs", "show", "guides/testing-workflows"]).await;
    assert_eq!(page.code, 0, "{page:?}");
    assert!(page.stdout.contains("test_workflow"), "the page's markdown: {page:?}");
    let missing = env.roscoe(env.tmp.path(), &["docs", "show", "guides/nope"]).await;
    assert_eq!(missing.code, 2, "{missing:?}");
    assert!(missing.stderr.contains("Run `roscoe docs list` for the slugs. (not_found)"), "a command, not a tool: {missing:?}");
}
