//! The quality gate inside `finished_step`, end to end: `.deepreview` rules over changed outputs, review blocks of
//! outputs and step arguments, process requirements, reviews of string outputs, `json_schema` checks, passing a
//! review with `mark_review_as_passed`, re-review after an edit, and `quality_review_override_reason`.
//!
//! Review ids end with the first 12 hex digits of a SHA-256 over the reviewed contents; the expected values here were
//! computed independently (Python `hashlib`) from the fixture texts.

use serde_json::{Value, json};

use crate::support::*;
use crate::workflows::on_both_transports;

on_both_transports!(deepreview_rule_gates_a_changed_output);

/// Two rules; `markdown_quality` is defined on line 10.
const DEEPREVIEW: &str = r#"# Review rules of the fixture project.
python_style:
  description: Python code follows the style guide
  match:
    include: ["**/*.py"]
  review:
    strategy: individual
    instructions: Check the style.

markdown_quality:
  description: Markdown reads well
  match:
    include: ["**/*.md"]
    exclude: ["drafts/**"]
  review:
    strategy: individual
    instructions: Check {file_path} for clarity.
"#;

/// The `claude` feedback of a `needs_work` result: fixed opening, the task list, then how to run and pass reviews.
fn gate_tasks(result: &Value) -> Vec<ListedTask> {
    assert_eq!(result["status"], "needs_work", "{result}");
    for field in ["begin_step", "summary", "all_outputs", "post_workflow_instructions"] {
        assert_eq!(result[field], Value::Null, "{field}");
    }
    let feedback = result["feedback"].as_str().unwrap();
    let opening = format!("Quality reviews are required before this step can advance.\n\n{TASK_LIST_HEADER}");
    assert!(feedback.starts_with(&opening), "{feedback}");
    assert!(feedback.contains("\n\n## How to Run Reviews\n\n"), "{feedback}");
    assert!(
        feedback.contains("\n\n## After Reviews\n\n") && feedback.contains("`mark_review_as_passed`"),
        "{feedback}"
    );
    listed_tasks(feedback)
}

async fn deepreview_rule_gates_a_changed_output(transport: Transport) {
    let project = Project::new();
    project.write(".deepreview", DEEPREVIEW);
    project.write("notes.md", "# Notes\n");
    let root = project.root();
    let client = project.connect(transport).await;
    project.git_init();

    let mut args = start("research", "full", "s1");
    args["inputs"] = json!({"topic": "caching"});
    client.ok("start_workflow", args).await;
    // notes.md is committed: unchanged outputs never trigger project rules.
    let next = client.ok("finished_step", json!({"outputs": {"notes": "notes.md"}, "session_id": "s1"})).await;
    assert_eq!(next["status"], "next_step", "{next}");
    assert_eq!(project.review_files(), Vec::<String>::new());

    project.write("report.md", "# Report\n");
    let finish = json!({"outputs": {"report": "report.md"}, "session_id": "s1"});
    let result = client.ok("finished_step", finish.clone()).await;
    let first = "markdown_quality--report.md--497b7725a001";
    assert_eq!(
        gate_tasks(&result),
        [ListedTask {
            description: "Review markdown_quality".into(),
            agent: "general-purpose".into(),
            prompt: format!(".deepwork/tmp/review_instructions/{first}.md"),
        }]
    );
    assert_eq!(stack(&result), [entry("research/full", "write")]);
    let text = project.instructions(first);
    let sections = [
        "# Review: markdown_quality — report.md\n\n## Project Root\n\n".to_owned(),
        format!("`{}`", root.display()),
        "\n## Review Instructions\n\nCheck report.md for clarity.\n\n## Relevant File Contents\n\n".to_owned(),
        "### report.md\n\nFile under review\n\n```markdown\n# Report\n```\n".to_owned(),
        "\n## Files to Review\n\n- @report.md\n\n## After Review\n\n".to_owned(),
        format!("- `review_id`: `\"{first}\"`\n\n---\nThis review was requested by the policy at `.deepreview:10`.\n"),
    ];
    let mut rest = text.as_str();
    for section in &sections {
        let at = rest.find(section.as_str()).unwrap_or_else(|| panic!("{section:?} missing (in order) from\n{text}"));
        rest = &rest[at + section.len()..];
    }
    assert_eq!(rest, "", "the file ends with the policy line");
    assert!(!text.contains("## Unchanged Matching Files") && !text.contains("## All Changed Files"));

    // get_review_instructions gives the same id for the same rule, file and contents, and leaves the gate's
    // pending file in place.
    let listed = client.text_ok("get_review_instructions", json!({"files": ["report.md", "notes.md"]})).await;
    assert_eq!(ids(&listed_tasks(&listed)), ["markdown_quality--notes.md--365d0b84ae63", first]);
    client.text_ok("get_review_instructions", json!({"files": ["notes.md"]})).await;
    assert!(project.review_dir("").join(format!("{first}.md")).exists(), "other callers keep pending files");

    // Asking again without passing gives the same review again.
    let again = client.ok("finished_step", finish.clone()).await;
    assert_eq!(ids(&gate_tasks(&again)), [first]);
    let state = read_json(&project.state_file("s1", "state.json"));
    assert_eq!(state["workflow_stack"][0]["step_progress"]["write"]["quality_attempts"], 2);

    let passed = client.text_ok("mark_review_as_passed", json!({"review_id": first})).await;
    assert_eq!(passed, format!("Review '{first}' marked as passed."));
    assert_eq!(std::fs::read(project.review_dir("").join(format!("{first}.passed"))).unwrap(), b"");

    // Editing the file after it passed asks for a new review of the new contents.
    project.write("report.md", "# Report\n\nNow with findings.\n");
    let edited = client.ok("finished_step", finish.clone()).await;
    let second = "markdown_quality--report.md--c61de883db56";
    assert_eq!(ids(&gate_tasks(&edited)), [second]);
    assert!(project.instructions(second).contains("```markdown\n# Report\n\nNow with findings.\n```"));
    assert!(project.review_dir("").join(format!("{first}.md")).exists(), "a passed review's file stays");

    client.text_ok("mark_review_as_passed", json!({"review_id": second})).await;
    let next = client.ok("finished_step", finish).await;
    assert_eq!(next["status"], "next_step", "{next}");
    assert_eq!(next["begin_step"]["step_id"], "conclude");
    let done = client.ok("finished_step", json!({"outputs": {"verdict": "good"}, "session_id": "s1"})).await;
    assert_eq!(done["status"], "workflow_complete");
    client.close().await;
}

/// Review blocks on an output and on its argument, an argument-only block with an agent, process requirements, a
/// reviewed string output, and a `json_schema`.
const REVIEWED_JOB: &str = r#"name: reviewed
summary: Steps whose outputs are reviewed
step_arguments:
  - name: topic
    description: The topic
    type: string
  - name: sources
    description: Source list
    type: file_path
  - name: report
    description: The report
    type: file_path
    review:
      strategy: individual
      instructions: "Argument review: the report has a summary."
  - name: appendix
    description: Appendix files
    type: file_path
    review:
      strategy: matches_together
      instructions: The appendix files agree with each other.
      agent:
        claude: appendix-checker
  - name: title
    description: The title
    type: string
    review:
      strategy: individual
      instructions: The title is short.
      agent:
        claude: title-critic
  - name: data
    description: Data file
    type: file_path
    json_schema:
      type: object
      required: [name]
      properties:
        name: {type: string}
        size: {type: integer}
workflows:
  main:
    summary: Write, name, record
    common_job_info_provided_to_all_steps_at_runtime: Reports are for engineers.
    steps:
      - name: write
        instructions: Write the report.
        inputs:
          topic: {}
          sources: {}
        outputs:
          report:
            review:
              strategy: individual
              instructions: "Output review: the report answers the topic."
          appendix:
            required: false
        process_requirements:
          cites_sources: The agent MUST cite every source it used.
      - name: name_it
        instructions: Choose a title.
        outputs:
          title: {}
        process_requirements:
          brief: The agent SHOULD keep the title brief.
      - name: record
        instructions: Record the data.
        outputs:
          data: {}
"#;

/// A project with the `reviewed` job and a `.deepreview` rule for appendix files, committed.
async fn reviewed_project() -> (Project, Client) {
    let project = Project::new();
    project.add_job("reviewed", REVIEWED_JOB);
    project.write(
        ".deepreview",
        "appendix_style:\n  description: Appendix style\n  match:\n    include: [\"a*.md\"]\n  review:\n    \
         strategy: individual\n    instructions: Appendix style.\n\
         json_data:\n  description: JSON data\n  match:\n    include: [\"*.json\"]\n  review:\n    \
         strategy: individual\n    instructions: Data review.\n",
    );
    let client = project.connect(Transport::Stdio).await;
    project.git_init();
    (project, client)
}

#[tokio::test(flavor = "multi_thread")]
async fn review_blocks_and_process_requirements() {
    let (project, client) = reviewed_project().await;
    let mut args = start("reviewed", "main", "s1");
    args["inputs"] = json!({"topic": "caching"});
    client.ok("start_workflow", args).await;
    project.write("report.md", "# Caching report\n");
    project.write("a1.md", "A1\n");
    project.write("a2.md", "A2\n");
    let outputs = json!({"report": "report.md", "appendix": ["a1.md", "a2.md"]});
    let summary = "I read three papers.";
    let finish = json!({"outputs": outputs, "session_id": "s1", "work_summary": summary});

    let tasks = gate_tasks(&client.ok("finished_step", finish.clone()).await);
    // Step reviews first (output block, argument block `_arg`, argument-only block, process), then project rules.
    assert_eq!(
        descriptions(&tasks),
        [
            "Review reviewed/step_write_output_report",
            "Review reviewed/step_write_output_report_arg",
            "Review reviewed/step_write_output_appendix",
            "Review reviewed/step_write_process_quality",
            "Review appendix_style",
            "Review appendix_style",
        ]
    );
    assert_eq!(
        ids(&tasks),
        [
            "step_write_output_report--report.md--4a6c435242c2",
            "step_write_output_report_arg--report.md--4a6c435242c2",
            "step_write_output_appendix--a1.md_AND_a2.md--36c766b94aae",
            "step_write_process_quality--a1.md_AND_a2.md_AND_report.md--13c3c76ad727",
            "appendix_style--a1.md--4fc93a7e3b47",
            "appendix_style--a2.md--09d0e85fc483",
        ]
    );
    let agents: Vec<&str> = tasks.iter().map(|t| t.agent.as_str()).collect();
    assert_eq!(agents[..4], ["general-purpose", "general-purpose", "appendix-checker", "general-purpose"]);

    let preamble = "## Review Instructions\n\n## Job Context\n\nReports are for engineers.\n\n## Step Inputs\n\n\
                    - **topic** (string): caching\n- **sources** (file_path): Source list — *not available*\n";
    let output_review = project.instructions(&tasks[0].id());
    assert!(output_review.starts_with("# Review: step_write_output_report — report.md\n"), "{output_review}");
    assert!(output_review.contains(preamble), "{output_review}");
    assert!(output_review.contains("Output review: the report answers the topic.\n\n"), "{output_review}");
    assert!(output_review.contains("### report.md\n\nFile under review\n\n```markdown\n# Caching report\n```\n"));
    assert!(output_review.ends_with("policy at `.deepwork/jobs/reviewed/job.yml:0`.\n"), "{output_review}");
    let argument_review = project.instructions(&tasks[1].id());
    assert!(
        argument_review.contains(preamble) && argument_review.contains("Argument review: the report has a summary.")
    );
    assert!(!argument_review.contains("Output review"));
    let appendix = project.instructions(&tasks[2].id());
    assert!(appendix.starts_with("# Review: step_write_output_appendix — 2 files\n"), "{appendix}");
    assert!(appendix.contains("## Files to Review\n\n- @a1.md\n- @a2.md\n"), "{appendix}");

    let process = project.instructions(&tasks[3].id());
    assert!(process.starts_with("# Review: step_write_process_quality — 3 files\n"), "{process}");
    assert!(process.contains(preamble), "{process}");
    for part in [
        "## Process Requirements Review\n\n",
        "## Requirements\n\n- **cites_sources**: The agent MUST cite every source it used.\n\n",
        "## Work Summary (work_summary)\n\nI read three papers.\n\n",
        "## Step Outputs\n\n- **report** (file_path): @report.md\n- **appendix** (file_path): @a1.md, @a2.md\n",
        "## Files to Review\n\n- @report.md\n- @a1.md\n- @a2.md\n",
    ] {
        assert!(process.contains(part), "{part:?} missing from\n{process}");
    }

    // Without a work summary there is nothing to judge the process by.
    let no_summary = json!({"outputs": outputs, "session_id": "s1"});
    let tasks = gate_tasks(&client.ok("finished_step", no_summary).await);
    assert!(!descriptions(&tasks).contains(&"Review reviewed/step_write_process_quality"), "{tasks:?}");
    assert_eq!(tasks.len(), 5);

    // Once committed, the outputs no longer trigger project rules; the step's own reviews still apply.
    project.commit_all("outputs");
    let tasks = gate_tasks(&client.ok("finished_step", finish.clone()).await);
    assert_eq!(tasks.len(), 4, "{tasks:?}");
    assert!(tasks.iter().all(|t| t.description.starts_with("Review reviewed/step_write_")), "{tasks:?}");
    for id in ids(&tasks) {
        client.text_ok("mark_review_as_passed", json!({"review_id": id})).await;
    }
    let next = client.ok("finished_step", finish).await;
    assert_eq!(next["status"], "next_step", "{next}");
    assert_eq!(next["begin_step"]["step_id"], "name_it");

    // A string output is reviewed inline; so is the work summary of a step without file outputs.
    let title = json!({"outputs": {"title": "A Guide to Caching"}, "session_id": "s1",
                       "work_summary": "Picked the shortest candidate."});
    let tasks = gate_tasks(&client.ok("finished_step", title.clone()).await);
    assert_eq!(
        tasks.iter().map(|t| (t.description.as_str(), t.agent.as_str())).collect::<Vec<_>>(),
        [
            ("Review reviewed/step_name_it_output_title", "title-critic"),
            ("Review reviewed/step_name_it_process_quality", "general-purpose")
        ]
    );
    assert_eq!(
        ids(&tasks),
        ["step_name_it_output_title--inline--d0cab42991bc", "step_name_it_process_quality--inline--d83b78e70264"]
    );
    let inline = project.instructions(&tasks[0].id());
    assert!(inline.starts_with("# Review: step_name_it_output_title — inline content\n"), "{inline}");
    assert!(inline.contains("The title is short.\n\n## Content to Review\n\nA Guide to Caching\n\n## After Review"));
    assert!(!inline.contains("## Files to Review") && !inline.contains("## Relevant File Contents"));
    let process = project.instructions(&tasks[1].id());
    assert!(process.contains("## Requirements\n\n- **brief**: The agent SHOULD keep the title brief.\n"), "{process}");
    assert!(process.contains("## Step Outputs\n\n- **title** (string): A Guide to Caching\n"), "{process}");
    assert!(process.contains("## Content to Review\n\nPicked the shortest candidate.\n"), "{process}");

    // The override skips the gate: the step advances and no review is written.
    let before = project.review_files();
    let mut overridden = title;
    overridden["quality_review_override_reason"] = json!("The user approved the title.");
    let next = client.ok("finished_step", overridden).await;
    assert_eq!(next["status"], "next_step", "{next}");
    assert_eq!(next["begin_step"]["step_id"], "record");
    assert_eq!(project.review_files(), before);
    let state = read_json(&project.state_file("s1", "state.json"));
    assert_eq!(
        state["workflow_stack"][0]["step_progress"]["name_it"]["work_summary"],
        "Picked the shortest candidate."
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn json_schema_failures_come_before_reviews_and_the_override_skips_them() {
    let (project, client) = reviewed_project().await;
    let skip = |outputs: Value, session: &str| json!({"outputs": outputs, "session_id": session, "quality_review_override_reason": "not under test"});
    client.ok("start_workflow", start("reviewed", "main", "s1")).await;
    project.write("report.md", "r\n");
    client.ok("finished_step", skip(json!({"report": "report.md"}), "s1")).await;
    client.ok("finished_step", skip(json!({"title": "t"}), "s1")).await;

    project.write("data.json", "{\"name\": 5, \"size\": 1}");
    project.write("bad.yml", "key: [unclosed\n");
    project.write("empty.yml", "");
    let result = client
        .ok("finished_step", json!({"outputs": {"data": ["data.json", "bad.yml", "empty.yml"]}, "session_id": "s1"}))
        .await;
    assert_eq!(result["status"], "needs_work");
    let feedback = result["feedback"].as_str().unwrap();
    let errors: Vec<&str> = feedback
        .strip_prefix("JSON schema validation failed:\n\n- ")
        .and_then(|rest| rest.strip_suffix("\n\nFix these issues and call finished_step again."))
        .unwrap_or_else(|| panic!("{feedback}"))
        .split("\n- Output")
        .collect();
    assert_eq!(errors.len(), 3, "one error per file: {feedback}");
    assert_eq!(
        errors[0],
        "Output 'data' file 'data.json': JSON schema validation failed: Validation error at name: 5 is not of type \"string\""
    );
    assert!(errors[1].starts_with(" 'data' file 'bad.yml': failed to parse: "), "{feedback}");
    assert_eq!(
        errors[2],
        " 'data' file 'empty.yml': JSON schema validation failed: Validation error at root: null is not of type \"object\"",
        "an empty file is null"
    );
    assert!(!feedback.contains("description: Review"));

    // Once the files are valid (JSON or YAML content), the project rule for JSON files asks for its review.
    project.write("data.json", "{\"name\": \"cache\"}");
    project.write("data.yml", "name: cache\nsize: 3\n");
    let data = json!({"outputs": {"data": ["data.json", "data.yml"]}, "session_id": "s1"});
    let tasks = gate_tasks(&client.ok("finished_step", data.clone()).await);
    assert_eq!(descriptions(&tasks), ["Review json_data"]);
    client.text_ok("mark_review_as_passed", json!({"review_id": tasks[0].id()})).await;
    let done = client.ok("finished_step", data).await;
    assert_eq!(done["status"], "workflow_complete", "{done}");

    // The override skips the schema check as well.
    client.ok("start_workflow", start("reviewed", "main", "s2")).await;
    client.ok("finished_step", skip(json!({"report": "report.md"}), "s2")).await;
    client.ok("finished_step", skip(json!({"title": "t"}), "s2")).await;
    let done = client.ok("finished_step", skip(json!({"data": "bad.yml"}), "s2")).await;
    assert_eq!(done["status"], "workflow_complete", "{done}");
    client.close().await;
}
