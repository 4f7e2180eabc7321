//! Files outside the project: a cloned repository must not get cairn to copy them into review prompts or step
//! results through a symbolic link, a `..` or an absolute path. Files under review are left out with a warning, a
//! step output is refused, a `.deepreview` whose instructions or reference files lead out is reported as broken, a
//! DeepSchema's references, examples and JSON Schema that lead out are reported and left out, and a job.yml, rule
//! file or manifest whose real path is outside is reported instead of read. Links that stay inside keep working.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::cli::{Repo, additional_context, write_event};
use crate::support::*;

/// What the file outside the project holds; it must never show up in anything cairn writes or answers.
const SECRET: &str = "SECRET-7f3a9c";

/// Every markdown file, reviewed one by one.
const MD_RULE: &str = r#"md:
  description: Markdown
  match:
    include: ["**/*.md"]
  review:
    strategy: individual
    instructions: Check it.
"#;

/// A directory beside the project holding `secret.txt`.
fn outside() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret.txt"), format!("{SECRET}\n")).unwrap();
    dir
}

/// The real path of `path`.
fn real(path: &Path) -> PathBuf {
    path.canonicalize().unwrap()
}

/// A symbolic link at `at` (parents created) pointing at `target`.
fn link(target: &Path, at: &Path) {
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, at).unwrap();
}

/// Why a file leading to `real` is not read, as cairn says it.
fn outside_reason(real: &Path, root: &Path) -> String {
    format!(
        "it resolves to {}, outside the project root {}; files outside the project are never read or written (a \
         symbolic link must point inside the project too)",
        real.display(),
        root.display()
    )
}

/// Fails if any review instruction file holds the secret.
fn assert_not_leaked(project: &Project) {
    for name in project.review_files() {
        let text = std::fs::read_to_string(project.review_dir("").join(&name)).unwrap();
        assert!(!text.contains(SECRET), "{name} holds the secret:\n{text}");
    }
}

/// A committed project with the markdown rule and `docs/real.md`, a client connected to it, and two links made after
/// the commit: `leak.md` to `secret.txt` in `secrets` and `alias.md` to `docs/real.md`.
async fn linked_project(secrets: &Path) -> (Project, PathBuf, Client) {
    let project = Project::new();
    project.write(".deepreview", MD_RULE);
    project.write("docs/real.md", "# Real\n");
    let root = project.root();
    let client = project.connect(Transport::Stdio).await;
    project.git_init();
    link(&secrets.join("secret.txt"), &root.join("leak.md"));
    link(&root.join("docs/real.md"), &root.join("alias.md"));
    (project, root, client)
}

/// Explicit files and changed files that lead outside (a link to a file, a file in a linked directory) are left out
/// with a warning naming each; a link to a file inside the project is reviewed with its contents.
#[tokio::test(flavor = "multi_thread")]
async fn review_files_leading_outside_are_left_out() {
    let secrets = outside();
    std::fs::write(secrets.path().join("notes.md"), format!("{SECRET}\n")).unwrap();
    let (project, root, client) = linked_project(secrets.path()).await;
    link(secrets.path(), &root.join("ext"));

    let leak = format!("  - leak.md: {}", outside_reason(&real(&secrets.path().join("secret.txt")), &root));
    let ext = format!("  - ext/notes.md: {}", outside_reason(&real(&secrets.path().join("notes.md")), &root));
    let files = json!({"files": ["leak.md", "ext/notes.md", "alias.md", "docs/real.md"]});
    let text = client.text_ok("get_review_instructions", files).await;
    let (warning, body) = text.split_once(&format!("\n\n{TASK_LIST_HEADER}")).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(warning, format!("Warning: Some files were left out of the review:\n{ext}\n{leak}"));
    let tasks = listed_tasks(&format!("{TASK_LIST_HEADER}{body}"));
    assert_eq!(descriptions(&tasks), ["Review md", "Review md"]);
    assert!(tasks[0].id().starts_with("md--alias.md--"), "{tasks:?}");
    let alias = project.instructions(&tasks[0].id());
    assert!(alias.contains("### alias.md\n\nFile under review\n\n```markdown\n# Real\n```"), "{alias}");
    assert_not_leaked(&project);

    // The same files as changes on the branch (untracked; `ext` itself is no markdown file, so it is not named).
    std::fs::write(root.join("docs/real.md"), "# Real, edited\n").unwrap();
    let text = client.text_ok("get_review_instructions", json!({})).await;
    let (warning, body) = text.split_once(&format!("\n\n{TASK_LIST_HEADER}")).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(warning, format!("Warning: Some files were left out of the review:\n{leak}"));
    let tasks = listed_tasks(&format!("{TASK_LIST_HEADER}{body}"));
    let ids = ids(&tasks);
    assert!(ids.iter().any(|id| id.starts_with("md--alias.md--")), "{ids:?}");
    assert!(ids.iter().any(|id| id.starts_with("md--docs-real.md--")), "{ids:?}");
    assert!(!ids.iter().any(|id| id.contains("leak")), "{ids:?}");
    assert_not_leaked(&project);

    // Nothing else to review: the warning still says why.
    let text = client.text_ok("get_review_instructions", json!({"files": ["leak.md"]})).await;
    assert_eq!(text, format!("Warning: Some files were left out of the review:\n{leak}\n\nNo changed files detected."));
    client.close().await;
}

/// `finished_step` refuses a file output that leads outside (the state stays as it was) and accepts one that is a
/// link to a file inside the project.
#[tokio::test(flavor = "multi_thread")]
async fn step_outputs_leading_outside_are_refused() {
    let secrets = outside();
    let (project, root, client) = linked_project(secrets.path()).await;

    client.ok("start_workflow", start("research", "full", "s1")).await;
    let err = client.fail("finished_step", json!({"outputs": {"notes": "leak.md"}, "session_id": "s1"})).await;
    assert_eq!(
        err,
        format!(
            "Error calling tool 'finished_step': Output 'notes': path 'leak.md' cannot be used: {}. Give a regular \
             file inside the project, relative to its root.",
            outside_reason(&real(&secrets.path().join("secret.txt")), &root)
        )
    );
    let state = read_json(&project.state_file("s1", "state.json"));
    assert_eq!(state["workflow_stack"][0]["current_step_id"], "gather");
    assert_eq!(state["workflow_stack"][0]["step_progress"]["gather"]["quality_attempts"], 0, "{state}");
    assert_not_leaked(&project);

    let result = client.ok("finished_step", json!({"outputs": {"notes": "alias.md"}, "session_id": "s1"})).await;
    assert_eq!(result["status"], "needs_work", "{result}");
    let feedback = result["feedback"].as_str().unwrap();
    let tasks = listed_tasks(feedback);
    assert!(tasks[0].id().starts_with("md--alias.md--"), "{feedback}");
    assert!(project.instructions(&tasks[0].id()).contains("```markdown\n# Real\n```"));
    client.close().await;
}

/// `.deepreview` files whose instructions file or reference files lead outside (`..`, an absolute path, a link) are
/// reported and their rules left out; a `.deepreview` that is itself a link outside, or sits in a linked directory
/// outside, is not read. The project's other rules still work.
#[tokio::test(flavor = "multi_thread")]
async fn rule_files_pointing_outside_are_reported() {
    let secrets = outside();
    let secret = real(&secrets.path().join("secret.txt"));
    std::fs::write(
        secrets.path().join("rules.yml"),
        MD_RULE.replace("md:", "outside_rule:").replace("Check it.", SECRET),
    )
    .unwrap();
    std::fs::create_dir(secrets.path().join("vendor")).unwrap();
    std::fs::write(secrets.path().join("vendor/.deepreview"), MD_RULE.replace("md:", "vendor_rule:")).unwrap();
    let project = Project::new();
    let root = project.root();
    assert_eq!(root.parent(), real(secrets.path()).parent(), "the project and the secrets are siblings");
    let up = Path::new("..").join(secrets.path().file_name().unwrap()).join("secret.txt");
    let rule = |name: &str, review: &str| {
        let head = "  description: d\n  match:\n    include: [\"*.md\"]\n  review:\n    strategy: individual";
        format!("{name}:\n{head}\n{review}")
    };
    project.write(".deepreview", MD_RULE);
    project.write("a/.deepreview", &rule("a", &format!("    instructions: {{file: ../{}}}\n", up.display())));
    project.write(
        "b/.deepreview",
        &rule("b", &format!("    instructions: i\n    reference_files:\n      - path: {}\n", secret.display())),
    );
    project.write("c/.deepreview", &rule("c", "    instructions: i\n    reference_files:\n      - path: ref.md\n"));
    link(&secret, &root.join("c/ref.md"));
    link(&secrets.path().join("rules.yml"), &root.join("d/.deepreview"));
    link(&secrets.path().join("vendor"), &root.join("vendor"));
    project.write("docs/real.md", "# Real\n");
    let client = project.connect(Transport::Stdio).await;

    let text = client.text_ok("get_review_instructions", json!({"files": ["docs/real.md"]})).await;
    let (warning, body) = text.split_once(&format!("\n\n{TASK_LIST_HEADER}")).unwrap_or_else(|| panic!("{text}"));
    let file = |dir: &str| root.join(dir).join(".deepreview").display().to_string();
    let (a, b, c, d) = (file("a"), file("b"), file("c"), file("d"));
    let reason = outside_reason(&secret, &root);
    assert_eq!(
        warning.split("\n  - ").collect::<Vec<_>>(),
        [
            "Warning: Some .deepreview files could not be parsed:".to_owned(),
            format!("{a}: Failed to read instructions file {} (rule 'a' in {a}): {reason}", secret.display()),
            format!("{b}: Reference file '{}' of rule 'b' in {b} cannot be used: {reason}", secret.display()),
            format!("{c}: Reference file 'ref.md' of rule 'c' in {c} cannot be used: {reason}"),
            format!(
                "{d}: Failed to parse {d}: Failed to read YAML file {d}: {}",
                outside_reason(&real(&secrets.path().join("rules.yml")), &root)
            ),
        ]
    );
    assert_eq!(descriptions(&listed_tasks(&format!("{TASK_LIST_HEADER}{body}"))), ["Review md"]);
    assert_not_leaked(&project);

    let configured = client.list_ok("get_configured_reviews", json!({})).await;
    let names: Vec<&str> = configured.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert!(!names.iter().any(|n| n.contains("vendor") || n.contains("outside")), "{names:?}");
    assert!(!serde_json::to_string(&configured).unwrap().contains(SECRET));
    client.close().await;
}

/// DeepSchema references, examples and JSON Schemas that lead outside are reported and left out (the schema still
/// reviews with the rest); an anonymous schema that is a link outside is not read.
#[tokio::test(flavor = "multi_thread")]
async fn deepschema_files_pointing_outside_are_reported() {
    let secrets = outside();
    let secret = real(&secrets.path().join("secret.txt"));
    std::fs::write(secrets.path().join("manifest.yml"), format!("requirements:\n  r: {SECRET} MUST hold.\n")).unwrap();
    let project = Project::new();
    let root = project.root();
    project.write(
        ".deepwork/schemas/doc/deepschema.yml",
        &format!(
            "matchers: [\"docs/*.md\"]\nrequirements:\n  r: It MUST be good.\njson_schema_path: schema.json\n\
             references:\n  - path: {secret}\n    description: Absolute\n  - path: style.md\n    description: Kept\n\
             examples:\n  - path: ../../../../{up}\n    description: Up\n",
            secret = secret.display(),
            up = Path::new(secrets.path().file_name().unwrap()).join("secret.txt").display(),
        ),
    );
    project.write(".deepwork/schemas/doc/style.md", "Write plainly.\n");
    link(&secret, &root.join(".deepwork/schemas/doc/schema.json"));
    link(&secrets.path().join("manifest.yml"), &root.join("docs/.deepschema.real.md.yml"));
    project.write("docs/real.md", "# Real\n");
    let client = project.connect(Transport::Stdio).await;

    let text = client.text_ok("get_review_instructions", json!({"files": ["docs/real.md"]})).await;
    let (warning, body) = text.split_once(&format!("\n\n{TASK_LIST_HEADER}")).unwrap_or_else(|| panic!("{text}"));
    let manifest = root.join(".deepwork/schemas/doc/deepschema.yml").display().to_string();
    let anonymous = root.join("docs/.deepschema.real.md.yml").display().to_string();
    let reason = outside_reason(&secret, &root);
    let up = format!("../../../../{}", Path::new(secrets.path().file_name().unwrap()).join("secret.txt").display());
    assert_eq!(
        warning.split("\n  - ").collect::<Vec<_>>(),
        [
            "Warning: Some .deepreview files could not be parsed:".to_owned(),
            format!(
                "deepschema: Failed to parse {anonymous}: Failed to read YAML file {anonymous}: {}",
                outside_reason(&real(&secrets.path().join("manifest.yml")), &root)
            ),
            format!("deepschema: {manifest}: examples entry '{up}' cannot be used: {reason}"),
            format!("deepschema: {manifest}: references entry '{}' cannot be used: {reason}", secret.display()),
            format!("deepschema: {manifest}: json_schema_path entry 'schema.json' cannot be used: {reason}"),
        ]
    );
    let tasks = listed_tasks(&format!("{TASK_LIST_HEADER}{body}"));
    assert_eq!(descriptions(&tasks), ["Review doc/doc DeepSchema Compliance"]);
    let text = project.instructions(&tasks[0].id());
    assert!(text.contains("### style.md\n\nKept\n\n```markdown\nWrite plainly.\n```"), "{text}");
    assert!(!text.contains("Example files"), "{text}");
    assert_not_leaked(&project);
    client.close().await;
}

/// A job.yml (or a job directory) whose real path is outside the project is reported, not loaded; a job directory
/// linked to another place inside the project loads.
#[tokio::test(flavor = "multi_thread")]
async fn jobs_leading_outside_are_reported() {
    let secrets = outside();
    let job = SINGLE_JOB.replace("name: single", "name: evil").replace("One workflow, one step", SECRET);
    std::fs::create_dir(secrets.path().join("jobdir")).unwrap();
    std::fs::write(secrets.path().join("jobdir/job.yml"), &job).unwrap();
    let project = Project::empty();
    let root = project.root();
    link(&secrets.path().join("jobdir/job.yml"), &root.join(".deepwork/jobs/evil/job.yml"));
    link(&secrets.path().join("jobdir"), &root.join(".deepwork/jobs/linked"));
    project.write("tools/inner/job.yml", &SINGLE_JOB.replace("name: single", "name: inner"));
    link(&root.join("tools/inner"), &root.join(".deepwork/jobs/inner"));
    let client = project.connect(Transport::Stdio).await;

    let listed = client.ok("get_workflows", json!({})).await;
    assert!(!listed.to_string().contains(SECRET), "{listed}");
    let names: Vec<&str> = listed["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"inner") && !names.contains(&"evil"), "{names:?}");
    let errors = listed["errors"].as_array().unwrap();
    let reason = outside_reason(&real(&secrets.path().join("jobdir/job.yml")), &root);
    for (error, dir) in errors.iter().zip(["evil", "linked"]) {
        assert_eq!(error["job_name"], dir);
        let path = root.join(".deepwork/jobs").join(dir).join("job.yml");
        let expected = format!("Failed to load job.yml: Failed to read YAML file {}: {reason}\n", path.display());
        assert!(error["error"].as_str().unwrap().starts_with(&expected), "{error}");
    }
    assert_eq!(errors.len(), 2, "{errors:?}");
    let err = client.fail("start_workflow", start("evil", "only", "s1")).await;
    assert!(err.contains(&reason) && !err.contains(SECRET), "{err}");
    client.close().await;
}

/// The `deepschema_write` hook neither validates a written file that is a link outside the project nor reads a JSON
/// Schema that is one; it says why instead.
#[test]
fn deepschema_write_hook_reads_nothing_outside() {
    let secrets = outside();
    std::fs::write(secrets.path().join("config.json"), format!("{{\"token\": \"{SECRET}\"}}\n")).unwrap();
    let repo = Repo::new();
    let root = repo.root();
    repo.write("docs/.deepschema.config.json.yml", "json_schema_path: schema.json\n");
    repo.write("docs/schema.json", r#"{"type": "integer"}"#);
    link(&secrets.path().join("config.json"), &root.join("docs/config.json"));
    let output = repo.hook("deepschema_write", &write_event(&repo, "docs/config.json"));
    let text = additional_context(&output);
    assert!(!text.contains(SECRET), "{text}");
    let reason = outside_reason(&real(&secrets.path().join("config.json")), &root);
    assert!(text.ends_with(&format!("\n\nCannot read the file: {reason}")), "{text}");

    repo.write("cfg/.deepschema.app.json.yml", "json_schema_path: s.json\n");
    link(&secrets.path().join("config.json"), &root.join("cfg/s.json"));
    repo.write("cfg/app.json", "{}\n");
    let output = repo.hook("deepschema_write", &write_event(&repo, "cfg/app.json"));
    let text = additional_context(&output);
    assert!(text.ends_with(&format!("\n\nCannot read the JSON Schema cfg/s.json: {reason}")), "{text}");
}

/// A review instruction directory that is a link out of the project is neither written nor cleaned up (cairn deleted
/// every `.md` file there that looked stale), and a `.passed` marker that is a link is replaced, not written through.
#[tokio::test(flavor = "multi_thread")]
async fn scratch_files_are_not_written_outside() {
    let notes = outside();
    let diary = notes.path().join("diary.md");
    std::fs::write(&diary, "Dear diary\n").unwrap();
    let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 60 * 60);
    std::fs::File::options().write(true).open(&diary).unwrap().set_modified(two_hours_ago).unwrap();
    let project = Project::new();
    project.write(".deepreview", MD_RULE);
    project.write("docs/real.md", "# Real\n");
    let root = project.root();
    let dir = root.join(".deepwork/tmp/review_instructions");
    link(notes.path(), &dir);
    let client = project.connect(Transport::Stdio).await;

    let reason = outside_reason(&real(notes.path()), &root);
    let text = client.text_ok("get_review_instructions", json!({"files": ["docs/real.md"]})).await;
    assert_eq!(
        text,
        format!("Review error: Error writing instruction files: {} cannot be used: {reason}", dir.display())
    );
    let id = "md--docs-real.md--0123456789ab";
    let text = client.text_ok("mark_review_as_passed", json!({"review_id": id})).await;
    assert!(text.starts_with(&format!("Could not mark review '{id}' as passed: ")), "{text}");
    assert!(text.contains(&format!("{} cannot be used: {reason}", dir.display())), "{text}");
    // The quality gate neither.
    project.git_init();
    project.write("docs/new.md", "# New\n");
    client.ok("start_workflow", start("research", "full", "s1")).await;
    let err = client.fail("finished_step", json!({"outputs": {"notes": "docs/new.md"}, "session_id": "s1"})).await;
    assert_eq!(
        err,
        format!(
            "Error calling tool 'finished_step': Could not write the review instruction files: {} cannot be used: \
             {reason}",
            dir.display()
        )
    );
    let mut left: Vec<String> =
        std::fs::read_dir(notes.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    left.sort();
    assert_eq!(left, ["diary.md", "secret.txt"], "nothing written or deleted outside");

    std::fs::remove_file(&dir).unwrap();
    link(&diary, &dir.join(format!("{id}.passed")));
    let text = client.text_ok("mark_review_as_passed", json!({"review_id": id})).await;
    assert_eq!(text, format!("Review '{id}' marked as passed."));
    assert_eq!(std::fs::read_to_string(&diary).unwrap(), "Dear diary\n");
    let marker = std::fs::symlink_metadata(dir.join(format!("{id}.passed"))).unwrap();
    assert!(marker.is_file() && marker.len() == 0, "the marker replaced the link");
    client.close().await;
}
