//! The DeepWork sessions pages of `cairn serve --project DIR`: a session started over `/deepwork/mcp` is listed, and
//! its page shows the reviews its current step would still need — the step's own review the quality gate asked for,
//! and a `.deepreview` rule over a changed file — until they are marked passed.

use std::path::Path;
use std::process::Stdio;

use regex::Regex;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use tokio::process::Command;

use crate::cairn_serve::Served;
use crate::support::http;

const JOB: &str = "name: notes\nsummary: Write notes\nstep_arguments:\n  - name: notes\n    description: The notes file\n    \
    type: file_path\nworkflows:\n  write:\n    summary: Write the notes\n    steps:\n      - name: draft\n        \
    instructions: Write the notes.\n        outputs:\n          notes:\n            review:\n              \
    strategy: individual\n              instructions: The notes cover the goal.\n";

const RULES: &str = "markdown_style:\n  description: Markdown reads well\n  match:\n    include: [\"**/*.md\"]\n  review:\n    \
    strategy: individual\n    instructions: Check {file_path} reads well.\n";

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(["-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[tokio::test]
async fn a_session_page_shows_the_reviews_its_step_still_needs() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join(".deepwork/jobs/notes")).unwrap();
    std::fs::write(project.join(".deepwork/jobs/notes/job.yml"), JOB).unwrap();
    std::fs::write(project.join(".deepreview"), RULES).unwrap();
    git(&project, &["init", "-q", "-b", "main"]);
    git(&project, &["add", "-A"]);
    git(&project, &["commit", "-q", "-m", "initial"]);
    std::fs::write(project.join("notes.md"), "# Notes <script>\n").unwrap();

    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.arg("serve").arg("--project").arg(&project).env("CAIRN_HOME", tmp.path().join("home"));
    command.env_remove("CAIRN_DATABASE_URL");
    let served = Served::start(command).await;
    let deepwork = ().serve(StreamableHttpClientTransport::from_uri(served.url("/deepwork/mcp"))).await.unwrap();
    let call = |tool: &str, args: Value| {
        let Value::Object(args) = args else { unreachable!("objects only") };
        deepwork.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
    };
    let goal = "Notes about <b>cairns</b>";
    let started = call("start_workflow", json!({"goal": goal, "job_name": "notes", "workflow_name": "write", "session_id": "s1"}));
    assert_ne!(started.await.unwrap().is_error, Some(true));

    let gate = call("finished_step", json!({"outputs": {"notes": "notes.md"}, "session_id": "s1"})).await.unwrap();
    assert!(format!("{:?}", gate.content).contains("needs_work"), "the gate asks for reviews: {:?}", gate.content);

    let client = http();
    let list = client.get(served.url("/sessions")).send().await.unwrap().text().await.unwrap();
    assert!(list.contains(r#"<a href="/sessions/s1">s1</a>"#), "{list}");
    assert!(list.contains("Notes about &#60;b&#62;cairns&#60;/b&#62;"), "{list}");
    assert!(!list.contains("data-review"), "the list computes no reviews");

    let page = client.get(served.url("/sessions/s1")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("at step draft"), "{html}");
    let row = |rule: &str, origin: &str| {
        let pattern = format!(r#"<tr data-review="({rule}--notes\.md--[0-9a-f]{{12}})"><td>{rule}</td><td>notes\.md</td><td>{origin}</td>"#);
        let found = Regex::new(&pattern).unwrap().captures(&html).map(|c| c[1].to_owned());
        found.unwrap_or_else(|| panic!("a pending {rule} review: {html}"))
    };
    let (step_review, project_review) = (row("step_draft_output_notes", "step"), row("markdown_style", "project"));

    for review_id in [step_review, project_review] {
        let passed = call("mark_review_as_passed", json!({"review_id": review_id})).await.unwrap();
        assert_ne!(passed.is_error, Some(true));
    }
    let instructions = project.join(".deepwork/tmp/review_instructions");
    let written = std::fs::read_dir(&instructions).unwrap().count();
    let html = client.get(served.url("/sessions/s1")).send().await.unwrap().text().await.unwrap();
    assert!(html.contains(r#"<p id="no-reviews">No pending reviews.</p>"#), "passed reviews drop off: {html}");
    std::fs::write(project.join("notes.md"), "# Notes, edited\n").unwrap();
    let html = client.get(served.url("/sessions/s1")).send().await.unwrap().text().await.unwrap();
    for again in ["<td>step_draft_output_notes</td><td>notes.md</td><td>step</td>", "<td>markdown_style</td><td>notes.md</td><td>project</td>"] {
        assert!(html.contains(again), "an edited file needs its reviews again: {html}");
    }
    assert_eq!(std::fs::read_dir(&instructions).unwrap().count(), written, "the page writes no instruction files");

    let missing = client.get(served.url("/sessions/nope")).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    assert!(missing.text().await.unwrap().contains("/sessions lists the active ones"));
    assert_eq!(client.get(served.url("/sessions/a%2F..")).send().await.unwrap().status(), 404);
    let _ = deepwork.cancel().await;
}
