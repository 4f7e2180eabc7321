//! What the review tools answer when there is nothing to do or something is wrong (spec §7.6–§7.9): no changes, no
//! matching rule, no git repository, broken `.deepreview` files and DeepSchemas, refused review ids, and platforms
//! other than `claude`.

use serde_json::json;

use crate::support::*;

/// A rule for markdown under `docs/`, and a catch-all rule, on lines 1 and 9.
const RULES: &str = r#"md:
  description: Docs in markdown
  match:
    include: ["docs/*.md"]
  review:
    strategy: individual
    instructions: Check it.

everything:
  description: Catch-all
  match:
    include: ["**"]
  review:
    strategy: matches_together
    instructions: Anything.
"#;

#[tokio::test(flavor = "multi_thread")]
async fn outside_git_and_nothing_to_review() {
    let project = Project::new();
    project.write(".deepreview", RULES);
    let client = project.connect(Transport::Stdio).await;

    let err = client.text_ok("get_review_instructions", json!({})).await;
    assert!(err.starts_with("Review error: Git error: git diff failed: "), "{err}");
    assert!(err.contains("not a git repository"), "{err}");
    assert_eq!(client.text_ok("get_review_instructions", json!({"files": []})).await, "No changed files detected.");
    let none = client.text_ok("get_review_instructions", json!({"files": ["README.md"]})).await;
    assert_eq!(none, "No review rules matched the changed files.");
    // Explicit files need no git; a missing file is still reviewed (its contents hash as `MISSING`).
    let text = client.text_ok("get_review_instructions", json!({"files": ["docs/gone.md"]})).await;
    assert_eq!(ids(&listed_tasks(&text)), ["md--docs-gone.md--8af1d328d75e"]);

    // Outside git the gate sees no changed files: project rules don't apply, the step advances.
    client.ok("start_workflow", start("research", "full", "s1")).await;
    project.write("docs/notes.md", "n\n");
    let next = client.ok("finished_step", json!({"outputs": {"notes": "docs/notes.md"}, "session_id": "s1"})).await;
    assert_eq!(next["status"], "next_step", "{next}");

    // A clean repository has no changes.
    project.git_init();
    assert_eq!(client.text_ok("get_review_instructions", json!({})).await, "No changed files detected.");
    client.close().await;
}

/// A file where the instruction directory should be: every writer says what failed, and the state stays as it was.
#[tokio::test(flavor = "multi_thread")]
async fn instruction_files_that_cannot_be_written() {
    let project = Project::new();
    project.write(".deepreview", RULES);
    project.write(".deepwork/tmp/review_instructions", "in the way\n");
    let client = project.connect(Transport::Stdio).await;
    project.git_init();
    project.write("docs/a.md", "A\n");

    let err = client.text_ok("get_review_instructions", json!({"files": ["docs/a.md"]})).await;
    assert!(err.starts_with("Review error: Error writing instruction files: "), "{err}");
    let err = client.text_ok("mark_review_as_passed", json!({"review_id": "md--docs-a.md--06f961b802bc"})).await;
    assert!(err.starts_with("Could not mark review 'md--docs-a.md--06f961b802bc' as passed: "), "{err}");

    client.ok("start_workflow", start("research", "full", "s1")).await;
    let err = client.fail("finished_step", json!({"outputs": {"notes": "docs/a.md"}, "session_id": "s1"})).await;
    assert!(
        err.starts_with("Error calling tool 'finished_step': Could not write the review instruction files: "),
        "{err}"
    );
    let state = read_json(&project.state_file("s1", "state.json"));
    assert_eq!(state["workflow_stack"][0]["current_step_id"], "gather");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn review_ids_are_validated() {
    let project = Project::new();
    let client = project.connect(Transport::Stdio).await;
    let empty = "Validation error: review_id must not be empty.";
    let traversal = "Validation error: review_id must not contain path traversal sequences.";
    for (id, message) in [
        ("", empty),
        ("  \t", empty),
        ("..", traversal),
        ("../escape", traversal),
        ("/etc/passwd", traversal),
        ("a/b", traversal),
        ("a\\b", traversal),
    ] {
        assert_eq!(client.text_ok("mark_review_as_passed", json!({"review_id": id})).await, message, "{id:?}");
    }
    assert!(!project.dir.path().join(".deepwork/tmp/escape.passed").exists());
    assert_eq!(project.review_files(), Vec::<String>::new(), "nothing written for refused ids");
    let ok = client.text_ok("mark_review_as_passed", json!({"review_id": "md--docs-a.md--06f961b802bc"})).await;
    assert_eq!(ok, "Review 'md--docs-a.md--06f961b802bc' marked as passed.");
    assert_eq!(project.review_files(), ["md--docs-a.md--06f961b802bc.passed"]);
    // A file named `what...md` yields an id with dots inside; its review must be passable.
    let dotted = client.text_ok("mark_review_as_passed", json!({"review_id": "md--what...md--73cb3858a687"})).await;
    assert_eq!(dotted, "Review 'md--what...md--73cb3858a687' marked as passed.");
    let err = client.fail("mark_review_as_passed", json!({})).await;
    assert!(err.starts_with("Invalid arguments for tool 'mark_review_as_passed': missing field `review_id`"), "{err}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn broken_configuration_is_reported() {
    let project = Project::new();
    project.write(".deepreview", RULES);
    project.write("bad/.deepreview", "rule: [unclosed\n");
    project.write(
        "worse/.deepreview",
        "bad_rule:\n  description: No match\n  review:\n    strategy: individual\n    instructions: x\n",
    );
    // Ignored folders and .deepwork/tmp are not searched.
    project.write(".gitignore", "build/\n");
    project.write("build/.deepreview", "not: [valid\n");
    project.write(".deepwork/tmp/scratch/.deepreview", "not: [valid\n");
    project.write(
        ".deepwork/schemas/refs/deepschema.yml",
        "matchers: [\"refs/*.md\"]\nrequirements:\n  r: It MUST exist.\nreferences:\n  - path: missing.md\n    description: Gone\n",
    );
    project.write(".deepwork/schemas/zz_broken/deepschema.yml", "matchers: [unclosed\n");
    let root = project.root();
    let client = project.connect(Transport::Stdio).await;
    project.git_init();
    project.write("docs/a.md", "A\n");

    let bad = root.join("bad/.deepreview").display().to_string();
    let worse = root.join("worse/.deepreview").display().to_string();
    let refs = root.join(".deepwork/schemas/refs/deepschema.yml").display().to_string();
    let broken = root.join(".deepwork/schemas/zz_broken/deepschema.yml").display().to_string();
    let text = client.text_ok("get_review_instructions", json!({})).await;
    let (warning, body) = text.split_once(&format!("\n\n{TASK_LIST_HEADER}")).unwrap_or_else(|| panic!("{text}"));
    let parts: Vec<&str> = warning.split("\n  - ").collect();
    assert_eq!(parts[0], "Warning: Some .deepreview files could not be parsed:", "{warning}");
    assert_eq!(parts.len(), 5, "two .deepreview files and two DeepSchemas: {warning}");
    assert!(
        parts[1].starts_with(&format!("{bad}: Failed to parse {bad}: Failed to parse YAML file {bad}: ")),
        "{warning}"
    );
    assert!(
        parts[2].starts_with(&format!("{worse}: Schema validation failed for {worse}: Validation error at bad_rule: ")),
        "{warning}"
    );
    assert!(parts[2].contains("match"), "{warning}");
    // Manifests that fail to parse, then problems found building the rules.
    assert!(parts[3].starts_with(&format!("deepschema: Failed to parse {broken}: ")), "{warning}");
    let missing = root.join(".deepwork/schemas/refs/missing.md");
    assert_eq!(
        parts[4],
        format!("deepschema: {refs}: references entry 'missing.md' not found (resolved to {})", missing.display())
    );
    assert!(!warning.contains("build/") && !warning.contains("scratch"), "{warning}");
    assert_eq!(
        descriptions(&listed_tasks(&format!("{TASK_LIST_HEADER}{body}"))),
        ["Review md", "Review everything"],
        "valid rules still work"
    );

    let configured = client.list_ok("get_configured_reviews", json!({})).await;
    let rows: Vec<(&str, &str)> =
        configured.iter().map(|r| (r["name"].as_str().unwrap(), r["defining_file"].as_str().unwrap())).collect();
    assert_eq!(
        rows[..3],
        [
            ("md", ".deepreview:1"),
            ("everything", ".deepreview:9"),
            ("refs DeepSchema Compliance", ".deepwork/schemas/refs/deepschema.yml:0")
        ]
    );
    let errors = &configured[configured.len() - 2..];
    assert_eq!(errors[0]["name"], format!("PARSE_ERROR:{bad}"));
    assert_eq!(errors[0]["defining_file"], bad);
    assert!(errors[0]["description"].as_str().unwrap().starts_with(&format!("Failed to parse {bad}: ")));
    assert_eq!(errors[1]["name"], format!("PARSE_ERROR:{worse}"));
    assert!(errors[1]["description"].as_str().unwrap().starts_with(&format!("Schema validation failed for {worse}: ")));
    assert!(
        !configured.iter().any(|r| r["name"].as_str().unwrap().contains("zz_broken")),
        "DeepSchema errors are not listed"
    );

    // The filter leaves out catch-all rules and rules matching none of the files, but still lists parse errors.
    let filtered = client.list_ok("get_configured_reviews", json!({"only_rules_matching_files": ["docs/a.md"]})).await;
    let names: Vec<&str> = filtered.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["md".to_owned(), format!("PARSE_ERROR:{bad}"), format!("PARSE_ERROR:{worse}")]);
    assert_eq!(filtered[0], json!({"name": "md", "description": "Docs in markdown", "defining_file": ".deepreview:1"}));

    let schemas = client.list_ok("get_named_schemas", json!({})).await;
    assert_eq!(schemas[0]["name"], "refs");
    assert_eq!(
        schemas[1],
        json!({"name": "zz_broken", "summary": format!("(failed to parse {broken})"), "matchers": []})
    );
    assert_eq!(schemas[2]["name"], "claude_settings");

    // Fixing a file is picked up on the next call.
    std::fs::remove_dir_all(root.join("bad")).unwrap();
    std::fs::remove_dir_all(root.join("worse")).unwrap();
    std::fs::remove_dir_all(root.join(".deepwork/schemas")).unwrap();
    let text = client.text_ok("get_review_instructions", json!({})).await;
    assert!(text.starts_with(TASK_LIST_HEADER), "{text}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn other_platforms_get_a_plain_list() {
    let project = Project::new();
    project.write(
        ".deepreview",
        &(md_rule("**/*.md", "individual", "Check it.") + "    agent:\n      claude: claude-agent\n      gemini: gemini-agent\n"),
    );
    let client = Client::stdio(project.command(&["--platform", "gemini"]), TestClient::default()).await;
    project.git_init();
    project.write("docs/a.md", "A\n");
    let id = "md--docs-a.md--06f961b802bc";
    let expected_item =
        format!("\n\n- Review md\n  instructions: .deepwork/tmp/review_instructions/{id}.md\n  agent: gemini-agent\n");

    let text = client.text_ok("get_review_instructions", json!({})).await;
    assert!(text.starts_with("Run the following reviews"), "{text}");
    assert!(text.ends_with(&expected_item), "{text}");
    assert!(!text.contains('@') && !text.contains("Unsupported platform"), "{text}");
    assert!(project.instructions(id).contains("## Files to Review\n\n- @docs/a.md\n"));

    // The gate lists its reviews the same way on this platform.
    client.ok("start_workflow", start("research", "full", "g1")).await;
    let result = client.ok("finished_step", json!({"outputs": {"notes": "docs/a.md"}, "session_id": "g1"})).await;
    assert_eq!(result["status"], "needs_work");
    let feedback = result["feedback"].as_str().unwrap();
    assert!(
        feedback.starts_with("Quality reviews are required before this step can advance.\n\nRun the following reviews")
    );
    assert!(feedback.contains(&format!("{expected_item}\n\n## How to Run Reviews")), "{feedback}");
    client.close().await;
}
