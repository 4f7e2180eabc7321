//! `roscoe run` at a terminal (a pseudo-terminal): the human step asked there and answered by typing (a number, an
//! event or a label in any case, then an optional comment), live progress
//! with colours on stderr — none with `NO_COLOR` — `--json` keeping stdout to the result, and Ctrl-C at the question
//! leaving the run paused.

use regex::Regex;
use serde_json::json;

use crate::cli_support::{OnTerminal, RELEASE};
use crate::runs_support::write_workflow;
use crate::support::Env;

/// An SGR sequence (a colour or weight).
fn colour() -> Regex {
    Regex::new("\x1b\\[[0-9;]*m").unwrap()
}

#[tokio::test]
async fn a_human_step_is_asked_at_the_terminal_and_answered_there() {
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "release", RELEASE);

    let mut command = env.cli(env!("CARGO_BIN_EXE_roscoe"), &["run", "release", "--json"]);
    command.current_dir(&repo).env_remove("NO_COLOR");
    let mut terminal = OnTerminal::start(command);
    terminal.wait_for("Choose 1–2").await;
    let asked = terminal.screen();
    assert!(asked.contains("Ship the build?"), "the prompt is shown: {asked}");
    assert!(asked.contains("1. approve — Ship it"), "choices numbered, with labels: {asked}");
    assert!(asked.contains("2. reject — Hold it"), "{asked}");
    for node in ["build", "check"] {
        assert!(asked.contains(node), "a progress line for {node} before the question: {asked}");
    }
    terminal.type_line("7");
    terminal.wait_for("not one of the choices").await;
    // The choice's label, in another case, as `roscoe runs resume` takes it; then a comment.
    terminal.type_line("SHIP IT");
    terminal.wait_for("Comment (optional").await;
    terminal.type_line("  green on CI  ");
    let (code, stdout, screen) = terminal.finish().await;

    assert_eq!(code, 0, "completed: {screen}");
    let result: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is the result, as JSON, alone");
    assert_eq!(result["status"], "completed");
    assert_eq!(result["output"]["stdout"], "shipped\n");
    for field in ["totalCostUsd", "meteredCostUsd", "subscriptionEquivCostUsd", "inputTokens", "outputTokens"] {
        assert!(result[field].is_number(), "cost field {field}: {result}");
    }
    assert!(screen.contains("ship") && screen.contains("completed"), "{screen}");
    assert!(colour().is_match(&screen), "colours on a terminal: {screen:?}");

    // The decision is the terminal's (decidedBy cli), recorded as the local person's.
    let run_id = result["runId"].as_str().unwrap();
    let history = env.roscoe(&repo, &["runs", "history", run_id, "--json"]).await.json();
    let review = history["nodes"].as_array().unwrap().iter().find(|n| n["nodeId"] == "review").unwrap();
    assert_eq!(review["output"]["choice"], "approve");
    assert_eq!(review["output"]["decidedBy"], "cli");
    assert_eq!(review["output"]["comment"], "green on CI", "the comment is kept, trimmed");
    let actions: Vec<_> = history["actions"].as_array().unwrap().iter().map(|a| (&a["action"], &a["via"])).collect();
    assert_eq!(actions, [(&json!("start"), &json!("cli")), (&json!("decide"), &json!("cli"))]);
}

#[tokio::test]
async fn no_colours_with_no_color_even_at_a_terminal() {
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "release", RELEASE);

    let mut command = env.cli(env!("CARGO_BIN_EXE_roscoe"), &["run", "release"]);
    command.current_dir(&repo).env("NO_COLOR", "1");
    let mut terminal = OnTerminal::start(command);
    terminal.wait_for("Choose 1–2").await;
    terminal.type_line("Reject");
    terminal.wait_for("Comment (optional").await;
    terminal.type_line("");
    let (code, stdout, screen) = terminal.finish().await;

    assert_eq!(code, 1, "rejecting fails the run: {screen}");
    assert!(stdout.is_empty(), "a failed run prints nothing on stdout: {stdout}");
    assert!(screen.contains("failed"), "{screen}");
    assert!(!colour().is_match(&screen), "no colour with NO_COLOR: {screen:?}");
}

#[tokio::test]
async fn ctrl_c_at_the_question_leaves_the_run_paused() {
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "release", RELEASE);

    let mut command = env.cli(env!("CARGO_BIN_EXE_roscoe"), &["run", "release", "--json"]);
    command.current_dir(&repo);
    let terminal = OnTerminal::start(command);
    terminal.wait_for("Choose 1–2").await;
    terminal.interrupt();
    let (code, stdout, screen) = terminal.finish().await;

    assert_eq!(code, 3, "the run waits for a person: {screen}");
    let result: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["status"], "paused");
    assert!(screen.contains("roscoe runs resume"), "how to answer later: {screen}");
    let run_id = result["runId"].as_str().unwrap();
    let shown = env.roscoe(&repo, &["runs", "show", run_id, "--json"]).await.json();
    assert_eq!(shown["pendingStep"]["nodeId"], "review", "still waiting at the human step");
}

#[tokio::test]
async fn a_node_without_comments_asks_for_none() {
    let env = Env::new();
    let repo = env.repo("project");
    let workflow = RELEASE.replace("prompt: \"Ship the build?\",", "prompt: \"Ship the build?\", allowComment: false,");
    assert_ne!(workflow, RELEASE);
    write_workflow(&repo, "release", &workflow);

    let mut command = env.cli(env!("CARGO_BIN_EXE_roscoe"), &["run", "release", "--json"]);
    command.current_dir(&repo);
    let mut terminal = OnTerminal::start(command);
    terminal.wait_for("Choose 1–2").await;
    terminal.type_line("approve");
    let (code, stdout, screen) = terminal.finish().await;
    assert_eq!(code, 0, "completed without a comment question: {screen}");
    assert!(!screen.contains("Comment (optional"), "{screen}");
    let result: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["status"], "completed");
}
