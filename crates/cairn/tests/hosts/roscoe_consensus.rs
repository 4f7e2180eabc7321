//! Scenario: through the plugin's `roscoe` server, Claude Code starts a workflow whose consensus step it answers with
//! parallel subagents (two `Agent` calls in one turn), then advances the run to its end.

use std::sync::Mutex;

use serde_json::{Value, json};

use crate::anthropic::{Answer, Block, Request, StandIn};
use crate::claude_code::{ClaudeCode, plugin_dir};

const WORKFLOW: &str = "name: review-gate\ndescription: Two reviewers must both approve\ninitial: gate\nnodes:\n  gate:\n    \
    type: consensus\n    config:\n      mode: gate\n      agentCount: 2\n      quorum: 2\n      prompt: Is the change in \
    NOTES.md safe to ship?\n    transitions: { approve: $end, reject: $fail }\n";

/// The structured result a tool returned (its text is the result's JSON).
fn parsed(text: &str) -> Value {
    serde_json::from_str(text.trim()).unwrap_or(Value::Null)
}

#[tokio::test]
async fn claude_code_runs_a_consensus_step_with_parallel_subagents() {
    let Some(claude) = ClaudeCode::find() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (home, project) = (tmp.path().join("home"), tmp.path().join("project"));
    std::fs::create_dir_all(project.join(".roscoe/workflows")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(project.join(".roscoe/workflows/review-gate.yaml"), WORKFLOW).unwrap();
    std::fs::write(project.join("NOTES.md"), "A harmless note.\n").unwrap();
    let cwd = project.canonicalize().unwrap().display().to_string();

    let subagent_turns = std::sync::Arc::new(Mutex::new(0));
    let counted = subagent_turns.clone();
    let model = StandIn::start(move |request: &Request| {
        if !request.has_tools() {
            return Answer::text("Review gate");
        }
        if request.first_user_text().contains("Is the change in NOTES.md safe to ship?") {
            *counted.lock().unwrap() += 1;
            return Answer::text(r#"{"reasoning": "The note changes nothing that runs.", "verdict": "approve"}"#);
        }
        let results = request.tool_results();
        match results.len() {
            0 => Answer::tool("mcp__plugin_cairn_roscoe__start_workflow", json!({"cwd": cwd, "id": "review-gate"})),
            1 => {
                let started = parsed(&results[0]);
                let step = &started["pendingStep"];
                let agents = step["agents"].as_array().cloned().unwrap_or_default();
                assert_eq!(agents.len(), 2, "the consensus step hands back two agents: {started}");
                let calls = agents
                    .iter()
                    .enumerate()
                    .map(|(i, agent)| Block::ToolUse {
                        name: "Agent".into(),
                        input: json!({"description": format!("reviewer {i}"), "subagent_type": "general-purpose",
                            "prompt": agent["prompt"]}),
                    })
                    .collect();
                Answer::blocks(calls)
            }
            3 => {
                let started = parsed(&results[0]);
                let responses: Vec<&str> = results[1..].iter().map(|r| r.trim()).collect();
                Answer::tool(
                    "mcp__plugin_cairn_roscoe__advance_consensus",
                    json!({"cwd": cwd, "run_id": started["runId"], "responses": responses}),
                )
            }
            _ => Answer::text(format!("The run answered: {}", results.last().unwrap())),
        }
    })
    .await;
    let plugin = plugin_dir();
    let result = claude
        .run(&project, &home, &model.base, "Run the roscoe workflow review-gate.", &["--plugin-dir", plugin.to_str().unwrap()], &[])
        .await;
    let text = result["result"].as_str().unwrap();
    assert!(text.contains(r#""status":"completed""#), "{result}");
    assert!(text.contains(r#""decision":"approve""#), "{result}");
    assert_eq!(*subagent_turns.lock().unwrap(), 2, "each agent of the consensus was a subagent of its own");
}
