//! The command line: the `deepwork` entry name, option errors, and `jobs get-stack`.

use serde_json::{Value, json};

use crate::support::*;

#[test]
fn deepwork_entry_name_takes_deepworks_options() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_deepwork"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for option in ["--path", "--transport", "--port", "--platform"] {
        assert!(help.contains(option), "{option} missing from\n{help}");
    }
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_deepwork"))
        .args(["serve", "--path", "/definitely/not/here", "--no-quality-gate", "--external-runner", "claude"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("Directory '/definitely/not/here' does not exist"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn get_stack_lists_active_workflows() {
    let project = Project::new();
    let client = project.connect(Transport::Stdio).await;
    client.ok("start_workflow", start("research", "full", "s1")).await;
    client.ok("start_workflow", start("single", "only", "s2")).await;
    client.ok("abort_workflow", json!({"explanation": "x", "session_id": "s2"})).await;
    client.close().await;
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_deepwork"))
        .args(["jobs", "get-stack", "--path"])
        .arg(project.dir.path())
        .env("CAIRN_HOME", project.home.path())
        .output()
        .unwrap();
    assert!(output.status.success());
    let stack: Value = serde_json::from_slice(&output.stdout).unwrap();
    let sessions = stack["active_sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["session_id"], "s1");
    assert_eq!(sessions[0]["current_step_id"], "gather");
    assert_eq!(sessions[0]["step_number"], 1);
    assert_eq!(sessions[0]["total_steps"], 3);
    assert_eq!(sessions[0]["current_step_instructions"], "Collect notes about the topic.");
}
