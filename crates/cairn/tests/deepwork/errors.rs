//! Every error path of the workflow tools: the message an agent gets, and that nothing changed.

use serde_json::json;

use crate::support::*;
use crate::workflows::on_both_transports;

on_both_transports!(lookup_and_output_errors, session_errors, argument_errors, broken_jobs_are_reported);

async fn lookup_and_output_errors(transport: Transport) {
    let project = Project::new();
    let client = project.connect(transport).await;
    let err = client.fail("start_workflow", start("nope", "x", "s1")).await;
    assert_eq!(err, "Error calling tool 'start_workflow': Job not found: nope");
    let err = client.fail("start_workflow", start("research", "nope", "s1")).await;
    assert_eq!(
        err,
        "Error calling tool 'start_workflow': Workflow 'nope' not found in job 'research'. Available workflows: full, quick"
    );
    let auto = client.ok("start_workflow", start("single", "whatever", "s1")).await;
    assert_eq!(stack(&auto), [entry("single/only", "answer")], "a job's only workflow is chosen whatever the name");
    client.ok("abort_workflow", json!({"explanation": "x", "session_id": "s1"})).await;

    client.ok("start_workflow", start("research", "full", "s1")).await;
    let before = std::fs::read_to_string(project.state_file("s1", "state.json")).unwrap();
    let cases = [
        (json!({"notes": "n.md", "bogus": "x", "alpha": "y"}), "Unknown output names: alpha, bogus. Declared outputs: notes"),
        (json!({}), "Missing required outputs: notes. All required outputs must be provided."),
        (json!({"notes": "missing.md"}), "Output 'notes': file not found at 'missing.md'"),
        (json!({"notes": ["missing.md"]}), "Output 'notes': file not found at 'missing.md'"),
    ];
    for (outputs, message) in cases {
        let err = client.fail("finished_step", json!({"outputs": outputs, "session_id": "s1"})).await;
        assert_eq!(err, format!("Error calling tool 'finished_step': {message}"));
    }
    let err = client.fail("finished_step", json!({"outputs": {"notes": "../outside.md"}, "session_id": "s1"})).await;
    assert!(err.contains("Output 'notes': path '../outside.md' is outside the project root"), "{err}");
    let err = client.fail("finished_step", json!({"outputs": {"notes": "/etc/hostname"}, "session_id": "s1"})).await;
    assert!(err.contains("is outside the project root"), "{err}");

    project.write("notes.md", "n\n");
    client.ok("finished_step", json!({"outputs": {"notes": "notes.md"}, "session_id": "s1"})).await;
    project.write("r.md", "r\n");
    let err = client.fail("finished_step", json!({"outputs": {"report": "r.md", "verdict": ["a"]}, "session_id": "s1"})).await;
    assert_eq!(err, "Error calling tool 'finished_step': Output 'verdict' is type 'string' and must be a string, got list");
    let after_errors = read_json(&project.state_file("s1", "state.json"));
    assert_eq!(after_errors["workflow_stack"][0]["current_step_id"], "write");
    assert_ne!(before, std::fs::read_to_string(project.state_file("s1", "state.json")).unwrap());
    client.close().await;
}

async fn session_errors(transport: Transport) {
    let project = Project::new();
    let client = project.connect(transport).await;
    // No workflow active: the agent is told how to get a session id.
    let none = "session_id is required. No workflow is active in this project: start_workflow starts one and returns \
                its session id (begin_step.session_id); pass that id to every later call.";
    assert_eq!(client.soft_error("finished_step", json!({"outputs": {}})).await, none);
    assert_eq!(client.soft_error("abort_workflow", json!({"explanation": "x"})).await, none);
    assert_eq!(client.soft_error("go_to_step", json!({"step_id": "a", "session_id": ""})).await, none);
    assert_eq!(client.soft_error("register_session_job", json!({"job_name": "a", "job_definition_yaml": "x"})).await, none);
    assert_eq!(client.soft_error("get_session_job", json!({"job_name": "a"})).await, none);

    // Without a session id, even on Claude Code, start_workflow makes a session and returns its id.
    let started = client.ok("start_workflow", json!({"goal": "Answer it", "job_name": "single", "workflow_name": "only"})).await;
    let generated = started["begin_step"]["session_id"].as_str().unwrap().to_owned();
    assert_eq!(generated.len(), 32, "a fresh uuid: {generated}");
    assert!(project.state_file(&generated, "state.json").is_file());
    client.ok("start_workflow", start("research", "full", "older")).await;
    // A later call without it is told exactly which ids it can pass, newest first.
    let listed = client.soft_error("finished_step", json!({"outputs": {"answer": "x"}})).await;
    assert_eq!(
        listed,
        format!(
            "session_id is required. Pass the session_id that start_workflow returned (begin_step.session_id), or \
             CLAUDE_CODE_SESSION_ID when your context has it. Sessions with an active workflow in this project, newest \
             first: `older` (research/full, step gather, goal: test goal); `{generated}` (single/only, step \
             answer, goal: Answer it)."
        )
    );
    let state = std::fs::read_to_string(project.state_file(&generated, "state.json")).unwrap();
    client.ok("finished_step", json!({"outputs": {"answer": "x"}, "session_id": generated})).await;
    assert_ne!(state, std::fs::read_to_string(project.state_file(&generated, "state.json")).unwrap());
    client.ok("abort_workflow", json!({"explanation": "x", "session_id": "older"})).await;

    let err = client.fail("finished_step", json!({"outputs": {}, "session_id": "empty"})).await;
    assert!(err.starts_with("Error calling tool 'finished_step': No active workflow session. Provide the session_id"), "{err}");
    let err = client.fail("go_to_step", json!({"step_id": "a", "session_id": "empty"})).await;
    assert_eq!(err, "Error calling tool 'go_to_step': No active workflow session. Use start_workflow to begin a workflow.");

    for bad in ["../escape", "a/b", "..", "x\\y"] {
        let err = client.fail("start_workflow", start("single", "only", bad)).await;
        assert!(err.contains("Invalid session_id"), "{bad}: {err}");
        let err = client.fail("finished_step", json!({"outputs": {}, "session_id": bad})).await;
        assert!(err.contains("Invalid session_id"), "{bad}: {err}");
    }
    let mut args = start("single", "only", "s1");
    args["agent_id"] = json!("../../x");
    assert!(client.fail("start_workflow", args).await.contains("Invalid agent_id"));
    let err = client.soft_error("get_session_job", json!({"job_name": "a", "session_id": "../x"})).await;
    assert!(err.contains("Invalid session_id"), "{err}");
    assert!(!project.dir.path().join(".deepwork/tmp/sessions/escape").exists());
    assert!(!project.dir.path().join(".deepwork/tmp/escape").exists());

    // A damaged state file is reported and left as it is.
    client.ok("start_workflow", start("single", "only", "s2")).await;
    let path = project.state_file("s2", "state.json");
    std::fs::write(&path, "{\"workflow_stack\": [tru").unwrap();
    let err = client.fail("finished_step", json!({"outputs": {"answer": "x"}, "session_id": "s2"})).await;
    assert!(err.contains("state.json is corrupt") && err.contains("fix or delete it"), "{err}");
    let err = client.fail("start_workflow", start("single", "only", "s2")).await;
    assert!(err.contains("is corrupt"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"workflow_stack\": [tru");
    client.close().await;
}

async fn argument_errors(transport: Transport) {
    let project = Project::new();
    let client = project.connect(transport).await;
    let err = client.fail("start_workflow", json!({"job_name": "single", "workflow_name": "only"})).await;
    assert!(err.starts_with("Invalid arguments for tool 'start_workflow': missing field `goal`"), "{err}");
    let err = client.fail("get_workflows", json!({"foo": 1})).await;
    assert!(err.contains("unknown field `foo`"), "{err}");
    let err = client.fail("finished_step", json!({"outputs": {"answer": 5}, "session_id": "s"})).await;
    assert_eq!(
        err,
        "Invalid arguments for tool 'finished_step': argument `outputs`, key `answer`: the value must be a string or a \
         list of strings, not 5. Check the tool's input schema (tools/list) and call it again."
    );
    let err = client.fail("start_workflow", json!({"goal": "g", "job_name": "single", "workflow_name": "only",
        "inputs": {"topic": {"deep": true}}})).await;
    assert!(err.contains("argument `inputs`, key `topic`: the value must be a string or a list of strings"), "{err}");
    let err = client.fail("go_to_step", json!({"step_id": 3, "session_id": "s"})).await;
    assert!(err.contains("invalid type: integer `3`, expected a string"), "{err}");
    assert_eq!(client.fail("no_such_tool", json!({})).await, "Unknown tool: 'no_such_tool'");
    client.close().await;
}

async fn broken_jobs_are_reported(transport: Transport) {
    let project = Project::new();
    project.add_job("broken", "name: broken\nsummary: x\nstep_arguments: []\nworkflows:\n  w:\n    summary: w\n    bogus_key: 1\n    steps: []\n");
    // A broken project copy of a standard job hides the standard one: what is listed is what start_workflow runs.
    project.add_job("deepplan", "name: [unclosed\n");
    let client = project.connect(transport).await;
    let listed = client.ok("get_workflows", json!({})).await;
    let names: Vec<&str> = listed["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert!(!names.contains(&"deepplan") && !names.contains(&"broken"), "{names:?}");
    let errors = listed["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 2);
    assert_eq!(errors[0]["job_name"], "broken");
    let error = errors[0]["error"].as_str().unwrap();
    assert!(error.starts_with("Job definition validation failed: Validation error at workflows -> w: "), "{error}");
    assert!(error.contains("job.yml:6:5") && error.contains("workflow_name=\"repair\""), "{error}");
    assert!(errors[1]["error"].as_str().unwrap().starts_with("Failed to load job.yml: Failed to parse YAML file"));
    let issue = listed["issue_detected"].as_str().unwrap();
    assert!(issue.starts_with("\n\n---\n**IMPORTANT: ISSUE DETECTED.**") && issue.contains("- **broken**: "), "{issue}");

    let started = client.ok("start_workflow", start("single", "only", "s1")).await;
    assert!(started["issue_detected"].is_string(), "successful results carry the notice");
    assert_eq!(started.as_object().unwrap().keys().last().unwrap(), "issue_detected");
    let soft = client.ok("finished_step", json!({"outputs": {}})).await;
    assert!(soft.get("issue_detected").is_none(), "missing-session soft errors don't");
    let err = client.fail("start_workflow", start("deepplan", "create_deep_plan", "s1")).await;
    assert!(err.starts_with("Error calling tool 'start_workflow': Failed to parse job 'deepplan': "), "{err}");
    let info = client.service.peer_info().unwrap();
    let instructions = info.instructions.as_deref().unwrap();
    let (summary, rest) = instructions.split_once("\n\n").unwrap();
    assert!(!summary.contains('\n') && summary.starts_with("DeepWork runs"), "{instructions}");
    assert!(rest.starts_with("## **IMPORTANT: ISSUE DETECTED**"), "{instructions}");

    // Fixing the file is picked up on the next call.
    std::fs::remove_dir_all(project.dir.path().join(".deepwork/jobs/broken")).unwrap();
    std::fs::remove_dir_all(project.dir.path().join(".deepwork/jobs/deepplan")).unwrap();
    let listed = client.ok("get_workflows", json!({})).await;
    assert_eq!(listed["errors"], json!([]));
    assert!(listed.get("issue_detected").is_none());
    client.close().await;
}
