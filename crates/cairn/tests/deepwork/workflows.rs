//! Whole workflows: a job from start to completion, nesting, sub-agent stacks, going back, aborting, session jobs.

use serde_json::json;

use crate::support::*;

/// Runs a scenario once over stdio and once over HTTP.
macro_rules! on_both_transports {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            use crate::support::Transport;
            #[tokio::test(flavor = "multi_thread")]
            async fn stdio() { super::$name(Transport::Stdio).await }
            #[tokio::test(flavor = "multi_thread")]
            async fn http() { super::$name(Transport::Http).await }
        }
    )*};
}
pub(crate) use on_both_transports;

on_both_transports!(full_job_from_start_to_complete, nested_workflows_and_agent_stacks, go_to_step_and_abort, session_jobs);

async fn full_job_from_start_to_complete(transport: Transport) {
    let project = Project::new();
    let root = project.root();
    let client = project.connect(transport).await;

    let listed = client.ok("get_workflows", json!({})).await;
    let names: Vec<&str> = listed["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["nested", "research", "single", "deepplan", "deepwork_jobs", "deepwork_reviews"]);
    let research = &listed["jobs"][1];
    assert_eq!(research["workflows"][0]["name"], "full");
    assert!(research["workflows"][0]["how_to_invoke"].as_str().unwrap().contains("workflow_name=\"full\""));
    assert_eq!(listed["errors"], json!([]));
    assert!(listed.get("issue_detected").is_none());

    let mut args = start("research", "full", "s1");
    args["inputs"] = json!({"topic": "rust servers", "ignored": "x"});
    let started = client.ok("start_workflow", args).await;
    let keys: Vec<&String> = started.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["important_note", "begin_step", "stack"]);
    let step = &started["begin_step"];
    assert_eq!(step["session_id"], "s1");
    assert_eq!(step["step_id"], "gather");
    assert_eq!(step["project_root"], root.display().to_string());
    assert_eq!(step["job_dir"], root.join(".deepwork/jobs/research").display().to_string());
    assert_eq!(step["common_job_info"], "Be concise.");
    assert_eq!(step["step_inputs"][0]["value"], "rust servers");
    assert_eq!(step["step_instructions"], "## Inputs\n\n- **topic** (required): rust servers\n\nCollect notes about the topic.");
    assert_eq!(
        step["step_expected_outputs"],
        json!([{"name": "notes", "type": "file_path", "description": "Research notes file", "required": true,
                "syntax_for_finished_step_tool": "filepath or list of filepaths"}])
    );
    assert_eq!(stack(&started), [entry("research/full", "gather")]);

    project.write("notes.md", "# Notes\n");
    let next = client.ok("finished_step", json!({"outputs": {"notes": "notes.md"}, "session_id": "s1", "work_summary": "w"})).await;
    let keys: Vec<&String> = next.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["status", "feedback", "begin_step", "summary", "all_outputs", "post_workflow_instructions", "stack"]);
    assert_eq!(next["status"], "next_step");
    assert_eq!(next["begin_step"]["step_id"], "write");
    let inputs = &next["begin_step"]["step_inputs"];
    assert_eq!(inputs[0]["value"], "notes.md");
    assert_eq!(inputs[1]["value"], json!(null), "start inputs reach only the first step");

    project.write("report.md", "# Report\n");
    let next = client.ok("finished_step", json!({"outputs": {"report": ["report.md"]}, "session_id": "s1"})).await;
    assert_eq!(next["status"], "next_step");
    assert_eq!(next["begin_step"]["step_inputs"][0]["value"], json!(["report.md"]));

    let done = client.ok("finished_step", json!({"outputs": {"verdict": "good"}, "session_id": "s1"})).await;
    assert_eq!(done["status"], "workflow_complete");
    assert_eq!(done["summary"], "Workflow 'full' completed successfully!");
    assert_eq!(done["all_outputs"], json!({"notes": "notes.md", "report": ["report.md"], "verdict": "good"}));
    assert_eq!(done["post_workflow_instructions"], "Tell the user where the report is.");
    assert_eq!(done["stack"], json!([]));

    let state = read_json(&project.state_file("s1", "state.json"));
    assert_eq!(state["workflow_stack"], json!([]));
    assert_eq!(state["completed_workflows"][0]["status"], "completed");
    assert_eq!(state["completed_workflows"][0]["step_progress"]["gather"]["work_summary"], "w");
    let status = std::fs::read_to_string(project.dir.path().join(".deepwork/tmp/status/v1/sessions/s1.yml")).unwrap();
    assert!(status.contains("status: completed") && status.contains("step_name: conclude"), "{status}");
    let manifest = std::fs::read_to_string(project.dir.path().join(".deepwork/tmp/status/v1/job_manifest.yml")).unwrap();
    assert!(manifest.contains("display_name: Research"), "{manifest}");
    client.close().await;
}

async fn nested_workflows_and_agent_stacks(transport: Transport) {
    let project = Project::new();
    let client = project.connect(transport).await;
    client.ok("start_workflow", start("nested", "outer", "s1")).await;
    let next = client.ok("finished_step", json!({"outputs": {}, "session_id": "s1"})).await;
    assert_eq!(next["begin_step"]["step_id"], "delegate");
    assert!(next["begin_step"]["step_instructions"].as_str().unwrap().contains("workflow_name=\"inner\""));

    let inner = client.ok("start_workflow", start("nested", "inner", "s1")).await;
    assert_eq!(stack(&inner), [entry("nested/outer", "delegate"), entry("nested/inner", "work")]);
    // The status file lists workflows in the order they were started, as DeepWork writes it: outer, then nested.
    let status = std::fs::read_to_string(project.dir.path().join(".deepwork/tmp/status/v1/sessions/s1.yml")).unwrap();
    let (outer_at, inner_at) = (status.find("\n    name: outer\n").unwrap(), status.find("\n    name: inner\n").unwrap());
    assert!(outer_at < inner_at, "outer before nested:\n{status}");
    let inner_id = read_json(&project.state_file("s1", "state.json"))["workflow_stack"][1]["workflow_instance_id"].clone();
    assert!(status.contains(&format!("active_workflow: {}\n", inner_id.as_str().unwrap())), "{status}");
    project.write("summary.md", "done\n");
    let done = client.ok("finished_step", json!({"outputs": {"summary_file": "summary.md"}, "session_id": "s1"})).await;
    assert_eq!(done["status"], "workflow_complete");
    assert_eq!(stack(&done), [entry("nested/outer", "delegate")], "the parent resumes at its step");

    // A sub-agent gets its own stack on top of the main one.
    let mut args = start("single", "only", "s1");
    args["agent_id"] = json!("a1");
    let agent = client.ok("start_workflow", args).await;
    assert_eq!(stack(&agent), [entry("nested/outer", "delegate"), entry("single/only", "answer")]);
    let main = read_json(&project.state_file("s1", "state.json"));
    let recorded = &main["workflow_stack"][0]["step_progress"]["delegate"]["sub_workflow_instance_ids"];
    assert_eq!(recorded.as_array().unwrap().len(), 2, "inner workflow and the agent's workflow are recorded");
    let agent_file = read_json(&project.state_file("s1", "agent_a1.json"));
    assert_eq!(agent_file["workflow_stack"][0]["job_name"], "single");

    // Without agent_id the main stack is untouched by the agent's workflow.
    let main_view = client.ok("go_to_step", json!({"step_id": "delegate", "session_id": "s1"})).await;
    assert_eq!(stack(&main_view), [entry("nested/outer", "delegate")]);
    let agent_done = client
        .ok("finished_step", json!({"outputs": {"answer": "42"}, "session_id": "s1", "agent_id": "a1"}))
        .await;
    assert_eq!(agent_done["status"], "workflow_complete");
    assert_eq!(stack(&agent_done), [entry("nested/outer", "delegate")]);
    let next = client.ok("finished_step", json!({"outputs": {}, "session_id": "s1"})).await;
    assert_eq!(next["begin_step"]["step_id"], "finish");
    client.close().await;
}

async fn go_to_step_and_abort(transport: Transport) {
    let project = Project::new();
    let client = project.connect(transport).await;
    let mut args = start("research", "full", "s1");
    args["inputs"] = json!({"topic": "caching"});
    client.ok("start_workflow", args).await;
    project.write("notes.md", "n\n");
    client.ok("finished_step", json!({"outputs": {"notes": "notes.md"}, "session_id": "s1"})).await;

    let back = client.ok("go_to_step", json!({"step_id": "gather", "session_id": "s1"})).await;
    let keys: Vec<&String> = back.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["begin_step", "invalidated_steps", "stack"]);
    assert_eq!(back["invalidated_steps"], json!(["gather", "write", "conclude"]));
    assert_eq!(back["begin_step"]["step_id"], "gather");
    assert_eq!(back["begin_step"]["step_inputs"][0]["value"], "caching", "start inputs survive going back");
    let state = read_json(&project.state_file("s1", "state.json"));
    assert_eq!(state["workflow_stack"][0]["step_progress"].as_object().unwrap().len(), 1);

    let err = client.fail("go_to_step", json!({"step_id": "conclude", "session_id": "s1"})).await;
    assert_eq!(
        err,
        "Error calling tool 'go_to_step': Cannot go forward to step 'conclude' (index 2 > current 0). Use finished_step to advance forward."
    );
    let err = client.fail("go_to_step", json!({"step_id": "nope", "session_id": "s1"})).await;
    assert_eq!(
        err,
        "Error calling tool 'go_to_step': Step 'nope' not found in workflow 'full'. Available steps: gather, write, conclude"
    );

    client.ok("start_workflow", start("single", "only", "s1")).await;
    let aborted = client.ok("abort_workflow", json!({"explanation": "not needed", "session_id": "s1"})).await;
    assert_eq!(
        aborted,
        json!({"aborted_workflow": "single/only", "aborted_step": "answer", "explanation": "not needed",
               "stack": [{"workflow": "research/full", "step": "gather"}],
               "resumed_workflow": "research/full", "resumed_step": "gather"})
    );
    let aborted = client.ok("abort_workflow", json!({"explanation": "stop", "session_id": "s1"})).await;
    assert_eq!(aborted["resumed_workflow"], json!(null));
    assert_eq!(aborted["stack"], json!([]));
    let err = client.fail("abort_workflow", json!({"explanation": "again", "session_id": "s1"})).await;
    assert_eq!(err, "Error calling tool 'abort_workflow': No active workflow session. Use start_workflow to begin a workflow.");
    let state = read_json(&project.state_file("s1", "state.json"));
    assert_eq!(state["completed_workflows"][0]["abort_reason"], "not needed");
    client.close().await;
}

async fn session_jobs(transport: Transport) {
    let project = Project::new();
    let client = project.connect(transport).await;
    let yaml = SINGLE_JOB.replace("name: single", "name: planned");
    let registered = client
        .ok("register_session_job", json!({"job_name": "planned", "job_definition_yaml": yaml, "session_id": "s1"}))
        .await;
    assert_eq!(registered["status"], "registered");
    let job_dir = registered["job_dir"].as_str().unwrap().to_owned();
    assert!(job_dir.ends_with(".deepwork/tmp/sessions/claude/session-s1/jobs/planned"), "{job_dir}");
    assert_eq!(
        registered["message"],
        "Session job 'planned' registered successfully. It can be started with start_workflow(job_name='planned', ...)."
    );
    let fetched = client.ok("get_session_job", json!({"job_name": "planned", "session_id": "s1"})).await;
    assert_eq!(fetched, json!({"job_name": "planned", "job_definition_yaml": yaml}));

    let started = client.ok("start_workflow", start("planned", "only", "s1")).await;
    assert_eq!(started["begin_step"]["job_dir"], job_dir);
    let err = client.fail("start_workflow", start("planned", "only", "s2")).await;
    assert_eq!(err, "Error calling tool 'start_workflow': Job not found: planned", "other sessions don't see it");

    let bad = client
        .soft_error("register_session_job", json!({"job_name": "planned", "job_definition_yaml": "name: planned\n", "session_id": "s1"}))
        .await;
    assert!(bad.starts_with("Job definition validation failed: Validation error at root: "), "{bad}");
    assert!(bad.contains("Nothing was registered"), "{bad}");
    let still = client.ok("get_session_job", json!({"job_name": "planned", "session_id": "s1"})).await;
    assert_eq!(still["job_definition_yaml"], yaml, "a failed registration leaves the previous one");

    let bad = client
        .soft_error("register_session_job", json!({"job_name": "x", "job_definition_yaml": "a: [", "session_id": "s1"}))
        .await;
    assert!(bad.starts_with("Invalid YAML syntax: "), "{bad}");
    let bad = client
        .soft_error("register_session_job", json!({"job_name": "Bad-Name", "job_definition_yaml": yaml, "session_id": "s1"}))
        .await;
    assert_eq!(bad, "Invalid job name 'Bad-Name': must match ^[a-z][a-z0-9_]*$");
    assert!(!project.state_file("s1", "jobs/x").exists(), "nothing is left behind by a failed registration");
    let missing = client.soft_error("get_session_job", json!({"job_name": "nope", "session_id": "s1"})).await;
    assert_eq!(missing, "Session job 'nope' not found for session 's1'.");
    client.close().await;
}
