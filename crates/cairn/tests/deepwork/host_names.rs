//! Texts name what the host has: `deepwork serve` without options names the tools of a plain `.mcp.json` server
//! (`mcp__deepwork__…`) and Claude Code's `general-purpose` agent; `--plugin cairn` the plugin's tools, reviewer
//! agent and commands; `--tool-prefix` another server name. Checked in the server instructions, `how_to_invoke`,
//! review tasks, a broken job's repair suggestion and `deepwork review`.

use serde_json::json;

use crate::support::*;

/// A project with the fixture jobs, a job that fails to load and a review rule for Markdown files.
fn project() -> Project {
    let project = Project::new();
    project.write(".deepreview", "prose:\n  description: Prose reads well\n  match:\n    include: [\"**/*.md\"]\n  \
        review:\n    strategy: individual\n    instructions: Check the prose.\n");
    project.write("notes.md", "# Notes\n");
    project
}

/// What one server tells: its instructions, how to start `research/full`, the reviewer of a review task and the
/// suggestion under a broken job.
struct Told {
    instructions: String,
    how_to_invoke: String,
    subagent: String,
    repair: String,
}

async fn told(project: &Project, args: &[&str]) -> Told {
    let client = project.connect_at(project.dir.path(), args).await;
    let instructions = client.service.peer_info().unwrap().instructions.clone().unwrap();
    project.add_job("broken", "name: broken\nsummary: x\nstep_arguments: []\nworkflows: {}\n");
    let listed = client.ok("get_workflows", json!({})).await;
    let research = listed["jobs"].as_array().unwrap().iter().find(|j| j["name"] == "research").unwrap().clone();
    let how_to_invoke = research["workflows"][0]["how_to_invoke"].as_str().unwrap().to_owned();
    let repair = listed["errors"][0]["error"].as_str().unwrap().lines().last().unwrap().to_owned();
    let tasks = client.text_ok("get_review_instructions", json!({"files": ["notes.md"]})).await;
    let subagent = listed_tasks(&tasks)[0].agent.clone();
    std::fs::remove_dir_all(project.dir.path().join(".deepwork/jobs/broken")).unwrap();
    client.close().await;
    Told { instructions, how_to_invoke, subagent, repair }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_plain_set_up_names_mcp_json_tools_and_the_general_purpose_agent() {
    let project = project();
    let told = told(&project, &[]).await;
    assert!(
        told.instructions.contains("matching these, call `mcp__deepwork__start_workflow` to start the workflow."),
        "{}",
        told.instructions
    );
    assert!(told.how_to_invoke.starts_with("Call `mcp__deepwork__start_workflow` with job_name=\"research\""), "{}", told.how_to_invoke);
    assert_eq!(told.subagent, "general-purpose");
    assert!(
        told.repair.ends_with("the `repair` workflow of `deepwork_jobs` (`mcp__deepwork__start_workflow` \
             (job_name=\"deepwork_jobs\", workflow_name=\"repair\")) to migrate legacy formats."),
        "{}",
        told.repair
    );
    assert!(!format!("{}{}{}", told.instructions, told.how_to_invoke, told.repair).contains("plugin"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_plugin_set_up_names_the_plugins_tools_agent_and_commands() {
    let project = project();
    let told = told(&project, &["--plugin", "cairn"]).await;
    assert!(told.instructions.contains("matching these, use `/cairn:deepwork` to start the workflow."), "{}", told.instructions);
    assert!(
        told.how_to_invoke.starts_with("Call `mcp__plugin_cairn_deepwork__start_workflow` with job_name=\"research\""),
        "{}",
        told.how_to_invoke
    );
    assert_eq!(told.subagent, "cairn:reviewer");
    assert!(told.repair.contains("(`/cairn:deepwork repair`)"), "{}", told.repair);

    let renamed = told_prefix(&project).await;
    assert!(renamed.starts_with("Call `mcp__dw__start_workflow` with"), "{renamed}");
}

/// `how_to_invoke` of a server started with `--tool-prefix mcp__dw__`.
async fn told_prefix(project: &Project) -> String {
    let client = project.connect_at(project.dir.path(), &["--tool-prefix", "mcp__dw__"]).await;
    let listed = client.ok("get_workflows", json!({})).await;
    client.close().await;
    let research = listed["jobs"].as_array().unwrap().iter().find(|j| j["name"] == "research").unwrap().clone();
    research["workflows"][0]["how_to_invoke"].as_str().unwrap().to_owned()
}
