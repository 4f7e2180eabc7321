//! The review tools: `get_review_instructions` with every strategy and additional context, from git changes and
//! from explicit `files`; DeepSchemas (named, anonymous at the root and in a subdirectory, from an additional folder)
//! with `get_configured_reviews` and `get_named_schemas`; rules and schemas picked up as their files change; clean-up
//! of stale instruction files.
//!
//! Review ids end with the first 12 hex digits of a SHA-256 over the reviewed contents; the expected values here were
//! computed independently (Python `hashlib`) from the fixture texts.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::support::*;
use crate::workflows::on_both_transports;

on_both_transports!(strategies_and_additional_context);

const ROOT_RULES: &str = r#"each_doc:
  description: Every doc on its own
  match:
    include: ["docs/*.md"]
  review:
    strategy: individual
    instructions: Review {file_path}.
docs_together:
  description: The docs as a set
  match:
    include: ["docs/*.md"]
    exclude: ["docs/skip*.md"]
  review:
    strategy: matches_together
    instructions: Do the docs agree?
    additional_context:
      unchanged_matching_files: true
      all_changed_filenames: true
tripwire:
  description: Python changes need a look at everything
  match:
    include: ["src/**/*.py"]
  review:
    strategy: all_changed_files
    instructions: Look at the whole change.
    agent:
      claude: senior-reviewer
everything:
  description: Catch-all
  match:
    include: ["**/*"]
  review:
    strategy: matches_together
    instructions: Anything goes.
"#;

/// A rule scoped to `docs/`, with a reference file and a precompute script.
const DOCS_RULES: &str = r#"local_docs:
  description: Docs seen from their folder
  match:
    include: ["*.md"]
  review:
    strategy: individual
    instructions: Local check.
    reference_files:
      - path: guide/style.md
        description: House style
    precomputed_info_for_reviewer_bash_command: ./context.sh --brief
"#;

/// Committed: the rules, `docs/{a,c,skip_me}.md`, README.md. Changed: `docs/a.md` (unstaged edit), `docs/b.md`
/// (untracked), `src/lib/x.py` (staged).
async fn strategies_and_additional_context(transport: Transport) {
    let project = Project::new();
    project.write(".deepreview", ROOT_RULES);
    project.write("docs/.deepreview", DOCS_RULES);
    project.write("docs/guide/style.md", "Use short sentences.\n");
    project.write("docs/context.sh", "#!/bin/sh\necho \"docs context $1 from $(basename \"$PWD\")\"\n");
    let script = project.dir.path().join("docs/context.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    for (file, text) in
        [("docs/a.md", "A old\n"), ("docs/c.md", "C\n"), ("docs/skip_me.md", "skip\n"), ("README.md", "r\n")]
    {
        project.write(file, text);
    }
    let client = project.connect(transport).await;
    project.git_init();
    project.write("docs/a.md", "A\n");
    project.write("docs/b.md", "B\n");
    project.write("src/lib/x.py", "x = 1\n");
    project.git(&["add", "src/lib/x.py"]);

    let text = client.text_ok("get_review_instructions", json!({})).await;
    assert!(text.starts_with(TASK_LIST_HEADER), "{text}");
    let tasks = listed_tasks(&text);
    assert_eq!(
        descriptions(&tasks),
        [
            "Review docs/local_docs",
            "Review docs/local_docs",
            "Review each_doc",
            "Review each_doc",
            "Review docs_together",
            "Review tripwire",
            "Review everything",
        ],
        "deepest .deepreview first, rules in file order; catch-all rules apply to git changes"
    );
    let all_three = "docs-a.md_AND_docs-b.md_AND_src-lib-x.py--fb134fd6e762";
    assert_eq!(
        ids(&tasks),
        [
            "local_docs--docs-a.md--06f961b802bc".to_owned(),
            "local_docs--docs-b.md--c0cde77fa8fe".to_owned(),
            "each_doc--docs-a.md--06f961b802bc".to_owned(),
            "each_doc--docs-b.md--c0cde77fa8fe".to_owned(),
            "docs_together--docs-a.md_AND_docs-b.md--daee1cd25194".to_owned(),
            format!("tripwire--{all_three}"),
            format!("everything--{all_three}"),
        ]
    );
    assert_eq!(tasks[5].agent, "senior-reviewer");
    assert!(tasks.iter().all(|t| t.prompt == format!(".deepwork/tmp/review_instructions/{}.md", t.id())));

    let local = project.instructions(&tasks[0].id());
    let root_name = project.root().file_name().unwrap().to_string_lossy().into_owned();
    for part in [
        "# Review: local_docs — docs/a.md\n".to_owned(),
        "## Review Instructions\n\nLocal check.\n\n## Relevant File Contents\n\n### docs/a.md\n\nFile under review\n\n\
         ```markdown\nA\n```\n\n### guide/style.md\n\nHouse style\n\n```markdown\nUse short sentences.\n```\n"
            .to_owned(),
        "## Files to Review\n\n- @docs/a.md\n".to_owned(),
        format!("## Precomputed Context\n\ndocs context --brief from {root_name}\n\n## After Review"),
        "policy at `docs/.deepreview:1`.\n".to_owned(),
    ] {
        assert!(local.contains(&part), "{part:?} missing from\n{local}");
    }
    let each = project.instructions(&tasks[2].id());
    assert!(each.contains("## Review Instructions\n\nReview docs/a.md.\n"), "{each}");
    assert!(!each.contains("## Unchanged Matching Files") && !each.contains("## Precomputed Context"), "{each}");

    let together = project.instructions(&tasks[4].id());
    for part in [
        "# Review: docs_together — 2 files\n",
        "## Files to Review\n\n- @docs/a.md\n- @docs/b.md\n\n## Unchanged Matching Files\n\n",
        "\n\n- @docs/c.md\n\n## All Changed Files\n\n",
        "\n\n- docs/a.md\n- docs/b.md\n- src/lib/x.py\n\n## After Review",
        "policy at `.deepreview:8`.\n",
    ] {
        assert!(together.contains(part), "{part:?} missing from\n{together}");
    }
    assert!(!together.contains("skip_me"), "excluded files are not unchanged matches: {together}");
    let tripwire = project.instructions(&tasks[5].id());
    assert!(tripwire.contains("# Review: tripwire — 3 files\n"), "{tripwire}");
    assert!(tripwire.contains("## Files to Review\n\n- @docs/a.md\n- @docs/b.md\n- @src/lib/x.py\n"), "{tripwire}");

    // Explicit files: de-duplicated and sorted, unchanged files are fine, catch-all rules are left out.
    let text =
        client.text_ok("get_review_instructions", json!({"files": ["docs/c.md", "docs/a.md", "docs/a.md"]})).await;
    let tasks = listed_tasks(&text);
    assert_eq!(
        ids(&tasks),
        [
            "local_docs--docs-a.md--06f961b802bc",
            "local_docs--docs-c.md--12f37a8a8403",
            "each_doc--docs-a.md--06f961b802bc",
            "each_doc--docs-c.md--12f37a8a8403",
            "docs_together--docs-a.md_AND_docs-c.md--e184bae4ce7b",
        ]
    );
    let together = project.instructions(&tasks[4].id());
    assert!(together.contains("\n\n- @docs/b.md\n\n## All Changed Files\n\n"), "{together}");
    assert!(together.contains("\n\n- docs/a.md\n- docs/c.md\n\n## After Review"), "{together}");
    let text = client.text_ok("get_review_instructions", json!({"files": ["src/lib/x.py"]})).await;
    assert_eq!(ids(&listed_tasks(&text)), ["tripwire--src-lib-x.py--9e26bf369911"]);
    let none = client.text_ok("get_review_instructions", json!({"files": ["README.md"]})).await;
    assert_eq!(none, "No review rules matched the changed files.", "only the catch-all rule matches README.md");

    // Every matched review passed: nothing left to do.
    for id in ids(&tasks) {
        client.text_ok("mark_review_as_passed", json!({"review_id": id})).await;
    }
    let done = client.text_ok("get_review_instructions", json!({"files": ["docs/a.md", "docs/c.md"]})).await;
    assert_eq!(done, "No review tasks to execute.");
    client.close().await;
}

/// A named schema with references and examples, one without requirements, anonymous schemas at the root and in
/// `sub/`, and a named schema from `DEEPWORK_ADDITIONAL_SCHEMAS_FOLDERS`.
#[tokio::test(flavor = "multi_thread")]
async fn deepschemas_named_anonymous_and_additional() {
    let project = Project::new();
    project.write(
        ".deepwork/schemas/api_doc/deepschema.yml",
        r#"summary: An API reference page
instructions: Keep endpoints in alphabetical order.
matchers:
  - "api/*.md"
requirements:
  has_examples: Every endpoint MUST show a request and a response.
  short_intro: The intro SHOULD be one paragraph.
examples:
  - path: example.md
    description: A complete page
references:
  - path: style.md
    description: House style
  - path: https://example.com/guide
    description: Online guide
"#,
    );
    project.write(".deepwork/schemas/api_doc/style.md", "Write plainly.\n");
    project.write(".deepwork/schemas/api_doc/example.md", "# Example\n");
    project.write(
        ".deepwork/schemas/notes_only/deepschema.yml",
        "summary: Notes, no requirements\nmatchers: [\"notes/*.md\"]\n",
    );
    project
        .write(".deepschema.config.json.yml", "requirements:\n  has_version: The file MUST have a \"version\" key.\n");
    project.write("sub/.deepschema.conf.yml.yml", "requirements:\n  has_port: The file MUST set a port.\n");
    project.write("config.json", "{\"version\": 1}\n");
    let extra = tempfile::tempdir().unwrap();
    let extra_manifest = extra.path().join("extra_doc/deepschema.yml");
    std::fs::create_dir_all(extra_manifest.parent().unwrap()).unwrap();
    std::fs::write(
        &extra_manifest,
        "summary: Extra\nmatchers: [\"extra/*.txt\"]\nrequirements:\n  r: It MUST be extra.\n",
    )
    .unwrap();
    let mut command = project.command(&[]);
    command.env("DEEPWORK_ADDITIONAL_SCHEMAS_FOLDERS", extra.path());
    let client = Client::stdio(command, TestClient::default()).await;
    project.git_init();
    for (file, text) in [
        ("api/users.md", "# Users API\n"),
        ("config.json", "{\"version\": 2}\n"),
        ("sub/conf.yml", "port: 8080\n"),
        ("sub/other.yml", "x: 1\n"),
        ("notes/n.md", "n\n"),
        ("extra/e.txt", "extra\n"),
    ] {
        project.write(file, text);
    }

    let text = client.text_ok("get_review_instructions", json!({})).await;
    let tasks = listed_tasks(&text);
    assert_eq!(
        descriptions(&tasks),
        [
            "Review api_doc/api_doc DeepSchema Compliance",
            "Review extra_doc/extra_doc DeepSchema Compliance",
            "Review config.json DeepSchema Compliance",
            "Review sub/conf.yml DeepSchema Compliance",
        ],
        "{text}"
    );
    assert_eq!(
        ids(&tasks),
        [
            "api_doc-DeepSchema-Compliance--api-users.md--390696dda8ee",
            "extra_doc-DeepSchema-Compliance--extra-e.txt--65110ea3b8b6",
            "config.json-DeepSchema-Compliance--config.json--667bf2cbcfd5",
            "conf.yml-DeepSchema-Compliance--sub-conf.yml--04eeaa6d3c2a",
        ]
    );
    let named = project.instructions(&tasks[0].id());
    for part in [
        "# Review: api_doc DeepSchema Compliance — api/users.md\n",
        "## Review Instructions\n\napi/users.md must follow the DeepSchema 'api_doc'.\nAn API reference page\n\n\
         How to work with these files:\nKeep endpoints in alphabetical order.\n\n",
        "\n- **has_examples**: Every endpoint MUST show a request and a response.\n\
         - **short_intro**: The intro SHOULD be one paragraph.\n\n",
        "- `.deepwork/schemas/api_doc/example.md` — A complete page\n",
        "- https://example.com/guide — Online guide\n",
        "### api/users.md\n\nFile under review\n\n```markdown\n# Users API\n```\n",
        "### style.md\n\nHouse style\n\n```markdown\nWrite plainly.\n```\n",
        "policy at `.deepwork/schemas/api_doc/deepschema.yml:0`.\n",
    ] {
        assert!(named.contains(part), "{part:?} missing from\n{named}");
    }
    assert!(!named.contains("{file_path}"), "{named}");
    let nested = project.instructions(&tasks[3].id());
    assert!(nested.contains("- **has_port**: The file MUST set a port."), "{nested}");
    assert!(nested.contains("## Files to Review\n\n- @sub/conf.yml\n"), "{nested}");
    assert!(nested.ends_with("policy at `sub/.deepschema.conf.yml.yml:0`.\n"), "{nested}");
    let extra_text = project.instructions(&tasks[1].id());
    assert!(extra_text.contains(&format!("policy at `{}:0`.", extra_manifest.display())), "{extra_text}");

    // A schema file is itself governed by the standard `deepschema` schema.
    let text = client.text_ok("get_review_instructions", json!({"files": [".deepschema.config.json.yml"]})).await;
    let tasks = listed_tasks(&text);
    assert_eq!(descriptions(&tasks), ["Review deepschema/deepschema DeepSchema Compliance"]);
    assert_eq!(tasks[0].id(), "deepschema-DeepSchema-Compliance--.deepschema.config.json.yml--4e72f63b12ce");

    let configured = client.list_ok("get_configured_reviews", json!({})).await;
    let rows: Vec<(&str, &str, &str)> = configured
        .iter()
        .map(|r| {
            (r["name"].as_str().unwrap(), r["description"].as_str().unwrap(), r["defining_file"].as_str().unwrap())
        })
        .collect();
    let names: Vec<&str> = rows.iter().map(|r| r.0).collect();
    assert_eq!(
        names,
        [
            "api_doc DeepSchema Compliance",
            "claude_settings DeepSchema Compliance",
            "deepreview DeepSchema Compliance",
            "deepschema DeepSchema Compliance",
            "job_yml DeepSchema Compliance",
            "requirements_file DeepSchema Compliance",
            "extra_doc DeepSchema Compliance",
            "config.json DeepSchema Compliance",
            "conf.yml DeepSchema Compliance",
        ]
    );
    assert_eq!(
        rows[0],
        (
            "api_doc DeepSchema Compliance",
            "DeepSchema compliance review for api_doc",
            ".deepwork/schemas/api_doc/deepschema.yml:0"
        )
    );
    assert!(rows[4].2.starts_with('/') && rows[4].2.ends_with("/job_yml/deepschema.yml:0"), "{:?}", rows[4]);
    assert_eq!(rows[6].2, format!("{}:0", extra_manifest.display()));
    assert_eq!(
        rows[7],
        (
            "config.json DeepSchema Compliance",
            "DeepSchema compliance review for config.json",
            ".deepschema.config.json.yml:0"
        )
    );
    assert_eq!(
        rows[8],
        (
            "conf.yml DeepSchema Compliance",
            "DeepSchema compliance review for sub/conf.yml",
            "sub/.deepschema.conf.yml.yml:0"
        )
    );
    let only = client
        .list_ok("get_configured_reviews", json!({"only_rules_matching_files": ["sub/conf.yml", "api/x.md"]}))
        .await;
    let only: Vec<&str> = only.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(only, ["api_doc DeepSchema Compliance", "conf.yml DeepSchema Compliance"]);
    let nothing =
        client.list_ok("get_configured_reviews", json!({"only_rules_matching_files": ["sub/other.yml"]})).await;
    assert_eq!(nothing, Vec::<Value>::new());

    let schemas = client.list_ok("get_named_schemas", json!({})).await;
    let names: Vec<&str> = schemas.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "api_doc",
            "notes_only",
            "claude_settings",
            "deepreview",
            "deepschema",
            "job_yml",
            "requirements_file",
            "extra_doc"
        ]
    );
    assert_eq!(schemas[0], json!({"name": "api_doc", "summary": "An API reference page", "matchers": ["api/*.md"]}));
    assert_eq!(
        schemas[1],
        json!({"name": "notes_only", "summary": "Notes, no requirements", "matchers": ["notes/*.md"]})
    );
    assert_eq!(schemas[5]["matchers"][0], ".deepwork/jobs/*/job.yml");
    client.close().await;
}

/// Markdown under `docs/`, reviewed one by one.
fn docs_rule() -> String {
    md_rule("docs/*.md", "individual", "Check it.")
}

/// Rule and schema files are re-read when they change, appear or disappear (even an edit that keeps the size).
#[tokio::test(flavor = "multi_thread")]
async fn rules_and_schemas_follow_their_files() {
    let project = Project::new();
    project.write(".deepreview", &docs_rule());
    project.write("docs/a.md", "A\n");
    let client = project.connect(Transport::Stdio).await;
    let files = json!({"files": ["docs/a.md"]});
    let id = "md--docs-a.md--06f961b802bc";
    let text = client.text_ok("get_review_instructions", files.clone()).await;
    assert_eq!(ids(&listed_tasks(&text)), [id]);
    assert!(project.instructions(id).contains("## Review Instructions\n\nCheck it.\n"));

    project.write(".deepreview", &docs_rule().replace("Check it.", "Check me."));
    client.text_ok("get_review_instructions", files.clone()).await;
    assert!(project.instructions(id).contains("## Review Instructions\n\nCheck me.\n"), "same size, new text");

    project.write("docs/.deepreview", &docs_rule().replace("md:", "local:").replace("docs/*.md", "*.md"));
    project.write(
        ".deepwork/schemas/doc/deepschema.yml",
        "matchers: [\"docs/*.md\"]\nrequirements:\n  titled: It MUST start with a title.\n",
    );
    project.write("docs/.deepschema.a.md.yml", "requirements:\n  short: It SHOULD be short.\n");
    let text = client.text_ok("get_review_instructions", files.clone()).await;
    assert_eq!(
        descriptions(&listed_tasks(&text)),
        [
            "Review docs/local",
            "Review md",
            "Review doc/doc DeepSchema Compliance",
            "Review docs/a.md DeepSchema Compliance"
        ]
    );
    let schemas = client.list_ok("get_named_schemas", json!({})).await;
    assert_eq!(schemas[0]["name"], "doc");

    std::fs::remove_file(project.dir.path().join("docs/.deepreview")).unwrap();
    std::fs::remove_dir_all(project.dir.path().join(".deepwork/schemas")).unwrap();
    std::fs::remove_file(project.dir.path().join("docs/.deepschema.a.md.yml")).unwrap();
    let text = client.text_ok("get_review_instructions", files).await;
    assert_eq!(descriptions(&listed_tasks(&text)), ["Review md"]);
    client.close().await;
}

/// Pending instruction files nobody rewrote for over an hour are removed on the next write; passed reviews' files
/// and recent ones stay.
#[tokio::test(flavor = "multi_thread")]
async fn stale_pending_instruction_files_are_removed() {
    let project = Project::new();
    project.write(".deepreview", &docs_rule());
    for (file, text) in [("docs/a.md", "A\n"), ("docs/b.md", "B\n"), ("docs/c.md", "C\n")] {
        project.write(file, text);
    }
    let client = project.connect(Transport::Stdio).await;
    let (stale, passed, fresh) =
        ("md--docs-a.md--06f961b802bc", "md--docs-b.md--c0cde77fa8fe", "md--docs-c.md--12f37a8a8403");
    client.text_ok("get_review_instructions", json!({"files": ["docs/a.md", "docs/b.md", "docs/c.md"]})).await;
    client.text_ok("mark_review_as_passed", json!({"review_id": passed})).await;
    let two_hours_ago = SystemTime::now() - Duration::from_secs(2 * 60 * 60);
    for name in [format!("{stale}.md"), format!("{passed}.md"), format!("{passed}.passed")] {
        let file = std::fs::File::options().write(true).open(project.review_dir("").join(name)).unwrap();
        file.set_modified(two_hours_ago).unwrap();
    }
    let text = client.text_ok("get_review_instructions", json!({"files": ["docs/c.md"]})).await;
    assert_eq!(ids(&listed_tasks(&text)), [fresh]);
    assert_eq!(project.review_files(), [format!("{passed}.md"), format!("{passed}.passed"), format!("{fresh}.md")]);
    client.close().await;
}
