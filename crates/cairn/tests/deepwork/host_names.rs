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

/// Everything a model reads of a server started with `args` before and at its first step: the instructions, the
/// tool definitions, `start_workflow`'s answer and the error for a missing session id.
async fn everything_read(project: &Project, args: &[&str]) -> (String, String) {
    let client = project.connect_at(project.dir.path(), args).await;
    let instructions = client.service.peer_info().unwrap().instructions.clone().unwrap();
    let tools = serde_json::to_string(&client.service.list_all_tools().await.unwrap()).unwrap();
    let started = client.ok("start_workflow", json!({"goal": "g", "job_name": "research", "workflow_name": "full",
        "session_id": "s-1"})).await;
    let missing = client.soft_error("finished_step", json!({"outputs": {}})).await;
    client.close().await;
    (instructions.clone(), format!("{instructions}\n{tools}\n{started}\n{missing}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn hosts_other_than_claude_code_read_no_claude_code_names_and_every_host_a_one_line_summary_first() {
    let project = project();
    for platform in ["gemini", "codex", "cursor", "other"] {
        let (instructions, read) = everything_read(&project, &["--platform", platform]).await;
        for claude_only in ["CLAUDE_CODE", "AskUserQuestion"] {
            assert!(!read.contains(claude_only), "{platform} reads {claude_only}:\n{read}");
        }
        assert!(read.contains("begin_step.session_id"), "{platform}: where the session id comes from is said");
        assert!(read.contains("ask the user which they mean"), "{platform}: {read}");
        let first = instructions.lines().next().unwrap();
        assert!(first.starts_with("DeepWork runs") && first.ends_with('.') && !first.starts_with('#'), "{first}");
    }
    let (instructions, read) = everything_read(&project, &[]).await;
    assert!(instructions.starts_with("DeepWork runs"), "{instructions}");
    let keeps = read.contains("CLAUDE_CODE_SESSION_ID") && read.contains("you MUST use AskUserQuestion");
    assert!(keeps, "Claude Code keeps them");

    let flags = ["--platform", "gemini", "--tool-prefix", "mcp_deepwork_"];
    let gemini = project.connect_at(project.dir.path(), &flags).await;
    let instructions = gemini.service.peer_info().unwrap().instructions.clone().unwrap();
    gemini.close().await;
    let named = instructions.contains("call `mcp_deepwork_start_workflow`");
    assert!(named, "the tools as Gemini names them: {instructions}");
}
