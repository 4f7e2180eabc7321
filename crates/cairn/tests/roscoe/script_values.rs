//! Values reach a `script` command without a shell injection: a template value inside double quotes (where `$(…)` in
//! an AI step's answer would run) is refused when validated and when tested, with the fix in the message, and the
//! fix — the value passed in `env`, the variable quoted in the command — prints an answer holding `$(…)` and
//! backticks literally, running none of it.

use serde_json::{Value, json};

use crate::support::{Client, Env, s};

/// An AI step's answer, then a script that uses it as `command`.
fn workflow(command: &str, env: &str) -> String {
    format!(
        "name: note\ninitial: draft\nnodes:\n  draft:\n    type: ai_agent\n    config: {{ prompt: Write a note }}\n    \
         transitions: {{ success: save }}\n  save:\n    type: script\n    config:\n      command: '{command}'\n{env}"
    )
}

const HOSTILE: &str = "hi $(touch pwned-dollar) `touch pwned-tick` \"; touch pwned-quote; \"";

async fn server(env: &Env) -> Client {
    let mut command = env.command(env!("CARGO_BIN_EXE_cairn"), &["roscoe"]);
    command.env_remove("ANTHROPIC_API_KEY");
    Client::stdio(command).await
}

fn nothing_ran(repo: &std::path::Path) {
    for file in ["pwned-dollar", "pwned-tick", "pwned-quote"] {
        assert!(!repo.join(file).exists(), "{file}: the answer ran as shell code");
    }
}

#[tokio::test]
async fn a_value_inside_double_quotes_is_refused_and_env_passes_it_literally() {
    let env = Env::new();
    let repo = env.repo("proj");
    let client = server(&env).await;
    let cwd = s(&repo);

    let quoted = workflow(r#"echo "note {{ draft.text }}""#, "");
    let checked: Value = client.ok("validate_workflow", json!({ "cwd": cwd, "yaml": quoted })).await;
    let said = checked.to_string();
    assert!(said.contains("script_hole_quoted"), "validation refuses the quoted hole: {checked}");
    assert!(said.contains("inside double quotes") && said.contains("env"), "and says the fix: {checked}");
    let mocks = json!({ "draft": HOSTILE });
    let tested = client.ok("test_workflow", json!({ "cwd": cwd, "yaml": quoted, "mocks": mocks })).await;
    assert_eq!(tested["ok"], false, "{tested}");
    assert!(tested.to_string().contains("script_hole_quoted"), "{tested}");
    nothing_ran(&repo);

    let through_env = workflow(r#"echo "note: $NOTE""#, "      env: { NOTE: \"{{ draft.text }}\" }\n");
    let checked: Value = client.ok("validate_workflow", json!({ "cwd": cwd, "yaml": through_env })).await;
    assert!(!checked.to_string().contains("script_hole_quoted"), "{checked}");
    let tested = client.ok("test_workflow", json!({ "cwd": cwd, "yaml": through_env, "mocks": mocks })).await;
    assert_eq!(tested["ok"], true, "{tested}");
    let save = tested["nodeTrace"].as_array().unwrap().iter().find(|n| n["nodeId"] == "save").unwrap().clone();
    assert_eq!(save["output"]["stdout"].as_str().map(str::trim), Some(format!("note: {HOSTILE}").as_str()), "{save}");
    nothing_ran(&repo);
    client.close().await;
}
