//! Scenarios: Claude Code runs a two-step DeepWork job to `workflow_complete`, its first step held back by a review
//! that a spawned sub-agent carries out, then `mark_review_as_passed`.
//!
//! 1. Through the plugin (`--plugin-dir plugins/claude`): the model takes its session id from the context the
//!    `startup_context` hook added (`CLAUDE_CODE_SESSION_ID=`), and the review runs in the plugin's reviewer agent
//!    (`cairn:reviewer`), whose context the hook gave the agent id.
//! 2. Through the README's plain `.mcp.json` (`--mcp-config`): no hook, so the model never knows a session id up
//!    front; `start_workflow` makes one and the model passes the `begin_step.session_id` it returned; the review runs
//!    in `general-purpose`.
//!
//! Afterwards cairn's own files say what happened: the session's completed workflow, the review's `.passed` marker.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::anthropic::{Answer, Request, StandIn};
use crate::claude_code::{ClaudeCode, plugin_dir};

const JOB: &str = "name: notes
summary: Write a short note, then sign it off
step_arguments:
  - name: note
    description: The note file
    type: file_path
    review:
      strategy: individual
      instructions: The note is one short paragraph.
  - name: sign_off
    description: Who signed the note off
    type: string
workflows:
  write:
    summary: Draft the note and sign it off
    steps:
      - name: draft
        instructions: Write the note to NOTE.md.
        outputs:
          note: {}
      - name: sign
        instructions: Sign the note off.
        inputs:
          note: {}
        outputs:
          sign_off: {}
";

/// How the host names things in one set-up.
struct SetUp {
    /// The deepwork tools' prefix.
    tools: &'static str,
    /// The agent review tasks name.
    reviewer: &'static str,
    /// Whether the session id comes from the hook's context (else from `start_workflow`).
    id_from_context: bool,
}

/// What the stand-in model saw.
#[derive(Default)]
struct Seen {
    /// Whether any request of the main conversation held a session id before the job started.
    id_in_context: bool,
    /// The context of the reviewer sub-agent's first request.
    reviewer_context: Option<String>,
}

/// A project holding the `notes` job and the note the first step hands in.
fn project(dir: &Path) {
    std::fs::create_dir_all(dir.join(".deepwork/jobs/notes")).unwrap();
    std::fs::write(dir.join(".deepwork/jobs/notes/job.yml"), JOB).unwrap();
    std::fs::write(dir.join("NOTE.md"), "cairn runs inside Claude Code.\n").unwrap();
}

/// The JSON a tool returned.
fn parsed(text: &str) -> Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|_| panic!("a tool result that is not JSON: {text}"))
}

/// The value after `CLAUDE_CODE_SESSION_ID=` in `text`, if any.
fn session_in(text: &str) -> Option<String> {
    let rest = &text[text.find("CLAUDE_CODE_SESSION_ID=")? + "CLAUDE_CODE_SESSION_ID=".len()..];
    Some(rest.split(|c: char| c.is_whitespace() || c == '"' || c == '\\').next()?.to_owned())
}

/// The scripted model: start the job, hand in the note, run the review task in a sub-agent, pass it, hand in the
/// note again, sign off.
fn model(set_up: &'static SetUp, seen: Arc<Mutex<Seen>>) -> impl Fn(&Request) -> Answer + Send + Sync + 'static {
    move |request: &Request| {
        if !request.has_tools() {
            return Answer::text("Notes");
        }
        if request.first_user_text().contains(".deepwork/tmp/review_instructions/") {
            seen.lock().unwrap().reviewer_context.get_or_insert_with(|| request.all_text());
            return Answer::text("Verdict: pass. The note is one short paragraph.");
        }
        let tool = |name: &str| format!("{}{name}", set_up.tools);
        let results = request.tool_results();
        let session = if set_up.id_from_context {
            session_in(&request.all_text()).expect("the hook put the session id into the context")
        } else {
            results.first().map(|r| parsed(r)["begin_step"]["session_id"].as_str().unwrap().to_owned()).unwrap_or_default()
        };
        let note = json!({"outputs": {"note": "NOTE.md"}, "session_id": session});
        match results.len() {
            0 => {
                seen.lock().unwrap().id_in_context = session_in(&request.all_text()).is_some();
                let mut start = json!({"goal": "Write a note", "job_name": "notes", "workflow_name": "write"});
                if set_up.id_from_context {
                    start["session_id"] = json!(session);
                }
                Answer::tool(tool("start_workflow"), start)
            }
            1 => Answer::tool(tool("finished_step"), note),
            2 => {
                let gate = parsed(&results[1]);
                assert_eq!(gate["status"], "needs_work", "{gate}");
                let feedback = gate["feedback"].as_str().unwrap();
                assert!(feedback.contains(&format!("\tsubagent_type: {}\n", set_up.reviewer)), "{feedback}");
                let prompt = feedback.split("\tprompt: ").nth(1).unwrap().lines().next().unwrap();
                let prompt: String = serde_json::from_str(prompt).unwrap();
                Answer::tool("Agent", json!({"description": "Review the note", "subagent_type": set_up.reviewer, "prompt": prompt}))
            }
            3 => {
                let feedback = parsed(&results[1])["feedback"].as_str().unwrap().to_owned();
                let file = feedback.split("review_instructions/").nth(1).unwrap();
                let review_id = &file[..file.find(".md\"").unwrap()];
                Answer::tool(tool("mark_review_as_passed"), json!({"review_id": review_id}))
            }
            4 => Answer::tool(tool("finished_step"), note),
            5 => {
                let next = parsed(&results[4]);
                assert_eq!(next["status"], "next_step", "{next}");
                Answer::tool(tool("finished_step"), json!({"outputs": {"sign_off": "claude"}, "session_id": session}))
            }
            _ => Answer::text(format!("Done: {}", results.last().unwrap())),
        }
    }
}

/// Runs the scenario with `args` (how Claude Code gets cairn) in a fresh project; checks cairn's files afterwards.
async fn run(set_up: &'static SetUp, args: impl Fn(&Path) -> Vec<String>) -> Seen {
    let Some(claude) = ClaudeCode::find() else { return Seen::default() };
    let tmp = tempfile::tempdir().unwrap();
    let (home, project_dir) = (tmp.path().join("home"), tmp.path().join("project"));
    std::fs::create_dir_all(&home).unwrap();
    project(&project_dir);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let stand_in = StandIn::start(model(set_up, seen.clone())).await;
    let args = args(&project_dir);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = claude.run(&project_dir, &home, &stand_in.base, "Write the note with the notes workflow.", &args, &[]).await;
    let text = result["result"].as_str().unwrap();
    assert!(text.contains(r#""status":"workflow_complete""#), "{result}");

    // cairn's state: one session, its workflow completed with both outputs, the review passed.
    let sessions = project_dir.join(".deepwork/tmp/sessions/claude");
    let dirs: Vec<_> = std::fs::read_dir(&sessions).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let session = dirs[0].strip_prefix("session-").unwrap().to_owned();
    if set_up.id_from_context {
        assert_eq!(result["session_id"].as_str(), Some(session.as_str()), "the session is Claude Code's own");
    }
    let state: Value = serde_json::from_str(&std::fs::read_to_string(sessions.join(&dirs[0]).join("state.json")).unwrap()).unwrap();
    assert_eq!(state["workflow_stack"], json!([]), "{state}");
    let done = &state["completed_workflows"][0];
    assert_eq!((done["job_name"].as_str(), done["status"].as_str()), (Some("notes"), Some("completed")), "{state}");
    assert_eq!(done["step_progress"]["sign"]["outputs"]["sign_off"], "claude", "{state}");
    let status = std::fs::read_to_string(project_dir.join(format!(".deepwork/tmp/status/v1/sessions/{session}.yml"))).unwrap();
    assert!(status.contains("status: completed"), "{status}");
    let passed: Vec<_> = std::fs::read_dir(project_dir.join(".deepwork/tmp/review_instructions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".passed"))
        .collect();
    assert_eq!(passed.len(), 1, "the review was marked passed: {passed:?}");
    std::mem::take(&mut *seen.lock().unwrap())
}

static PLUGIN: SetUp = SetUp { tools: "mcp__plugin_cairn_deepwork__", reviewer: "cairn:reviewer", id_from_context: true };
static PLAIN: SetUp = SetUp { tools: "mcp__deepwork__", reviewer: "general-purpose", id_from_context: false };

#[tokio::test]
async fn through_the_plugin_the_session_id_comes_from_the_hook_and_the_plugins_reviewer_reviews() {
    if ClaudeCode::find().is_none() {
        return;
    }
    let plugin = plugin_dir();
    let seen = run(&PLUGIN, |_| vec!["--plugin-dir".into(), plugin.display().to_string()]).await;
    assert!(seen.id_in_context);
    let reviewer = seen.reviewer_context.expect("a reviewer sub-agent ran");
    assert!(reviewer.contains("You review changes for cairn."), "the plugin's reviewer agent: {reviewer}");
    assert!(reviewer.contains("CLAUDE_CODE_AGENT_ID="), "the hook gave the sub-agent its id: {reviewer}");
}

#[tokio::test]
async fn through_a_plain_mcp_json_the_session_id_comes_from_start_workflow() {
    if ClaudeCode::find().is_none() {
        return;
    }
    let seen = run(&PLAIN, |project| {
        let config = json!({"mcpServers": {"deepwork": {"command": "deepwork", "args": ["serve", "--path", ".", "--platform", "claude"]}}});
        let file = project.join(".mcp.json");
        std::fs::write(&file, config.to_string()).unwrap();
        vec!["--mcp-config".into(), file.display().to_string()]
    })
    .await;
    assert!(!seen.id_in_context, "no session id in the context without the plugin's hook");
    assert!(seen.reviewer_context.is_some(), "a general-purpose sub-agent ran the review");
}
