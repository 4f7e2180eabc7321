//! A failing script's output in plain sight at the terminal: `roscoe run` prints the last lines of its stderr under
//! its progress line, `roscoe runs show` the tail of each script's streams, `roscoe runs logs RUN [NODE]` the whole
//! streams as text (colours dropped off a terminal), and `roscoe test` says why the run failed — the node, its
//! event, the run's error and code, and the script's stderr.

use serde_json::json;

use crate::runs_support::write_workflow;
use crate::support::Env;

/// A script that writes a line to stdout and twelve coloured lines to stderr, then fails; nothing handles it.
const BUILD: &str = "name: build\ninitial: compile\nnodes:\n  compile:\n    type: script\n    config: { command: \"echo compiling; for i in $(seq 1 12); do printf '\\\\033[31merror %s\\\\033[0m\\\\n' $i >&2; done; exit 2\" }\n    transitions: { success: $end }\n";

#[tokio::test]
async fn a_failing_scripts_stderr_is_shown_by_run_show_logs_and_test() {
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "build", BUILD);

    let ran = env.roscoe(&repo, &["run", "build"]).await;
    assert_eq!(ran.code, 1, "the run failed: {ran:?}");
    let stderr = &ran.stderr;
    let progress = stderr.find("compile").expect("the node's progress line");
    let tail = stderr.find("stderr (last 8 of 12 lines):").unwrap_or_else(|| panic!("a stderr tail: {stderr}"));
    assert!(progress < tail, "the tail is under the node's line: {stderr}");
    assert!(stderr.contains("│ error 5\n") && stderr.contains("│ error 12\n"), "the last 8 lines: {stderr}");
    assert!(!stderr.contains("│ error 4\n"), "only the last 8: {stderr}");
    assert!(!stderr.contains("\x1b["), "no colour codes off a terminal: {stderr:?}");

    let listed = env.roscoe(&repo, &["runs", "list", "--json"]).await.json();
    let run_id = listed[0]["id"].as_str().unwrap().to_owned();

    let shown = env.roscoe(&repo, &["runs", "show", &run_id]).await;
    assert_eq!(shown.code, 0, "{shown:?}");
    let out = &shown.stdout;
    assert!(out.contains("compile (script, failed, exit 2)"), "{out}");
    assert!(out.contains("  stdout:\n  │ compiling\n"), "the stdout tail: {out}");
    assert!(out.contains("  stderr (last 8 of 12 lines):") && out.contains("  │ error 12"), "{out}");
    assert!(out.contains(&format!("Whole streams: roscoe runs logs {run_id} [NODE]")), "{out}");

    let logs = env.roscoe(&repo, &["runs", "logs", &run_id, "compile"]).await;
    assert_eq!(logs.code, 0, "{logs:?}");
    let every: String = (1..=12).map(|i| format!("error {i}\n")).collect();
    assert_eq!(
        logs.stdout,
        format!("== compile (script, failed, exit 2) ==\n-- stdout\ncompiling\n-- stderr\n{every}"),
        "whole streams, as text"
    );
    let none = env.roscoe(&repo, &["runs", "logs", &run_id, "deploy"]).await;
    assert_eq!(none.code, 2, "{none:?}");
    assert!(none.stderr.contains("has no run of node 'deploy'; nodes that ran: compile"), "{}", none.stderr);

    let tested = env.roscoe(&repo, &["test", "build"]).await;
    assert_eq!(tested.code, 1, "{tested:?}");
    let why = &tested.stderr;
    assert!(why.contains("the run ended failed at node 'compile' (script, event failure)"), "{why}");
    assert!(why.contains(": node 'compile' failed: the script exited with code 2 (node_failed)"), "the error: {why}");
    assert_eq!(why.matches("exited with code 2").count(), 1, "the node's error once: {why}");
    assert!(why.contains("│ error 12"), "the script's stderr: {why}");

    let json = env.roscoe(&repo, &["test", "build", "--json"]).await.json();
    assert_eq!(json["finalStatus"], "failed");
    assert_eq!(json["failure"]["nodeId"], "compile");
    assert_eq!(json["failure"]["event"], "failure");
    assert_eq!(json["failure"]["code"], "node_failed");
    assert_eq!(json["failure"]["nodeError"], json!("the script exited with code 2"));
}
