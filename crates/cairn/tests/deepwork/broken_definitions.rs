//! Definition files that cannot be read as text: a `job.yml`, `.deepreview` or DeepSchema manifest that is a
//! directory, a FIFO, a link to `/dev/zero`, larger than the 1 MiB limit, nested too deeply or an alias bomb. Each is
//! reported in the error lists the tools already return for files that do not parse, promptly: nothing blocks on a
//! FIFO or reads a device or a huge file to its end, and the server stays up.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

/// What a FIFO, device or socket is refused with.
const NOT_REGULAR: &str = "it is not a regular file (it is a FIFO, socket or device)";
/// What a directory is refused with.
const DIRECTORY: &str = "it is a directory, not a file";
/// What a 50 MiB file is refused with.
const TOO_LARGE: &str = "it is too large: 52428800 bytes, over the limit of 1048576 bytes";

/// What a link to `/dev/zero` in the project at `root` is refused with: it leads out of the project.
fn dev_zero(root: &Path) -> String {
    format!(
        "it resolves to /dev/zero, outside the project root {}; files outside the project are never read or \
         written (a symbolic link must point inside the project too)",
        root.display()
    )
}


/// `call`'s outcome; fails when it takes longer than a minute (a hang, on this shared machine).
async fn promptly<T>(call: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), call).await.expect("the call did not finish within a minute")
}

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let status = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

fn link_to_dev_zero(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
}

/// A 50 MiB file of zero bytes (sparse: it takes no room on disk).
fn huge(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::File::create(path).unwrap().set_len(50 * 1024 * 1024).unwrap();
}

/// A YAML document `depth` sequences deep (within serde-saphyr's default depth limit of 64).
fn nested(depth: usize) -> String {
    (0..depth).map(|i| format!("{}-\n", " ".repeat(i))).collect()
}

/// A "billion laughs" document: ten levels of nine aliases to the level below.
fn alias_bomb() -> String {
    let mut text = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let below = format!("*a{}", i - 1);
        text.push_str(&format!("a{i}: &a{i} [{}]\n", [below.as_str(); 9].join(", ")));
    }
    text
}

/// At each of the six paths, in order: a directory, a link to `/dev/zero`, a FIFO, a 50 MiB file, a document nested
/// 63 deep and an alias bomb.
fn plant_broken_files([directory, dev_zero, fifo, large, deep, bomb]: [PathBuf; 6]) {
    std::fs::create_dir_all(directory).unwrap();
    link_to_dev_zero(&dev_zero);
    mkfifo(&fifo);
    huge(&large);
    for (path, text) in [(deep, nested(63)), (bomb, alias_bomb())] {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn broken_job_files_are_listed_as_errors() {
    let project = Project::new();
    let root = project.root();
    let jobs = root.join(".deepwork/jobs");
    let dirs = ["a_directory", "b_dev_zero", "c_fifo", "d_huge", "e_deep", "f_bomb"];
    plant_broken_files(dirs.map(|dir| jobs.join(dir).join("job.yml")));
    let client = project.connect(Transport::Stdio).await;

    let listed = promptly(client.ok("get_workflows", json!({}))).await;
    let errors: Vec<(&str, &str)> = listed["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["job_name"].as_str().unwrap(), e["error"].as_str().unwrap()))
        .collect();
    let names: Vec<&str> = errors.iter().map(|e| e.0).collect();
    assert_eq!(names, ["a_directory", "b_dev_zero", "c_fifo", "d_huge", "e_deep", "f_bomb"]);
    let read_error = |dir: &str, why: &str| {
        let path = jobs.join(dir).join("job.yml");
        format!("Failed to load job.yml: Failed to read YAML file {}: {why}\n", path.display())
    };
    let zero = dev_zero(&root);
    let expected = [("a_directory", DIRECTORY), ("b_dev_zero", &zero), ("c_fifo", NOT_REGULAR), ("d_huge", TOO_LARGE)];
    for (error, (dir, why)) in errors.iter().zip(expected) {
        assert!(error.1.starts_with(&read_error(dir, why)), "{error:?}");
    }
    let parse_error = |dir: &str| {
        format!("Failed to load job.yml: Failed to parse YAML file {}: ", jobs.join(dir).join("job.yml").display())
    };
    assert!(errors[4].1.starts_with(&parse_error("e_deep")) && errors[4].1.contains("levels deep"), "{:?}", errors[4]);
    assert!(errors[5].1.starts_with(&parse_error("f_bomb")) && errors[5].1.contains("aliases (`*name`)"), "{:?}", errors[5]);
    let jobs_listed: Vec<&str> =
        listed["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert!(jobs_listed.contains(&"research"), "the other jobs still work: {jobs_listed:?}");

    // Starting one says the same; the server is still there afterwards.
    let err = promptly(client.fail("start_workflow", start("c_fifo", "w", "s1"))).await;
    assert!(err.contains(NOT_REGULAR), "{err}");
    promptly(client.ok("start_workflow", start("research", "full", "s1"))).await;

    // A session job is held to the same limit.
    let big = format!("name: big\nsummary: \"{}\"\n", "x".repeat(1024 * 1024));
    let args = json!({"job_name": "big", "job_definition_yaml": big, "session_id": "s1"});
    let err = promptly(client.soft_error("register_session_job", args)).await;
    assert_eq!(
        err,
        format!(
            "The job definition is too large: {} bytes, over the limit of 1048576 bytes. Nothing was registered.",
            big.len()
        )
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn broken_rule_files_and_schemas_are_reported() {
    let project = Project::new();
    let root = project.root();
    project.write(".deepreview", &md_rule("**/*.md", "individual", "Check it."));
    plant_broken_files(["a", "b", "c", "d", "e", "f"].map(|dir| root.join(dir).join(".deepreview")));
    std::fs::create_dir_all(root.join(".deepwork/schemas/s_directory/deepschema.yml")).unwrap();
    link_to_dev_zero(&root.join(".deepwork/schemas/s_dev_zero/deepschema.yml"));
    mkfifo(&root.join("docs/.deepschema.fifo.md.yml"));
    huge(&root.join("docs/.deepschema.huge.md.yml"));
    project.write("docs/a.md", "# A\n");
    let client = project.connect(Transport::Stdio).await;

    let text = promptly(client.text_ok("get_review_instructions", json!({"files": ["docs/a.md"]}))).await;
    let (warning, body) = text.split_once(&format!("\n\n{TASK_LIST_HEADER}")).unwrap_or_else(|| panic!("{text}"));
    let parts: Vec<&str> = warning.split("\n  - ").collect();
    assert_eq!(parts[0], "Warning: Some .deepreview files could not be parsed:");
    let file = |dir: &str| root.join(dir).join(".deepreview").display().to_string();
    let unreadable = |p: &str, why: &str| format!("{p}: Failed to parse {p}: Failed to read YAML file {p}: {why}");
    assert_eq!(parts[1], unreadable(&file("a"), DIRECTORY));
    assert_eq!(parts[2], unreadable(&file("b"), &dev_zero(&root)));
    assert_eq!(parts[3], unreadable(&file("c"), NOT_REGULAR));
    assert_eq!(parts[4], unreadable(&file("d"), TOO_LARGE));
    for (part, dir, what) in [(parts[5], "e", "levels deep"), (parts[6], "f", "aliases (`*name`)")] {
        let p = file(dir);
        assert!(part.starts_with(&format!("{p}: Failed to parse {p}: Failed to parse YAML file {p}: ")), "{part}");
        assert!(part.contains(what), "{part}");
    }
    let manifest = |rel: &str| root.join(rel).display().to_string();
    let schema_error = |rel: &str, why: &str| {
        let p = manifest(rel);
        format!("deepschema: Failed to parse {p}: Failed to read YAML file {p}: {why}")
    };
    assert_eq!(
        parts[7..],
        [
            schema_error(".deepwork/schemas/s_dev_zero/deepschema.yml", &dev_zero(&root)),
            schema_error(".deepwork/schemas/s_directory/deepschema.yml", DIRECTORY),
            schema_error("docs/.deepschema.fifo.md.yml", NOT_REGULAR),
            schema_error("docs/.deepschema.huge.md.yml", TOO_LARGE),
        ]
    );
    assert_eq!(descriptions(&listed_tasks(&format!("{TASK_LIST_HEADER}{body}"))), ["Review md"], "{text}");

    let configured = promptly(client.list_ok("get_configured_reviews", json!({}))).await;
    let parse_errors: Vec<&str> =
        configured.iter().filter_map(|r| r["name"].as_str().unwrap().strip_prefix("PARSE_ERROR:")).collect();
    let expected: Vec<String> = ["a", "b", "c", "d", "e", "f"].iter().map(|d| file(d)).collect();
    assert_eq!(parse_errors, expected);

    let schemas = promptly(client.list_ok("get_named_schemas", json!({}))).await;
    for (schema, name) in schemas.iter().zip(["s_dev_zero", "s_directory"]) {
        let failed = format!("(failed to parse {})", manifest(&format!(".deepwork/schemas/{name}/deepschema.yml")));
        assert_eq!(schema, &json!({"name": name, "summary": failed, "matchers": []}));
    }
    client.close().await;
}

/// A step output that is a FIFO is refused (before, the quality gate waited for a writer forever).
#[tokio::test(flavor = "multi_thread")]
async fn a_fifo_is_no_step_output() {
    let project = Project::new();
    project.write(".deepreview", &md_rule("**/*.md", "individual", "Check it."));
    let client = project.connect(Transport::Stdio).await;
    project.git_init();
    mkfifo(&project.root().join("pipe.md"));
    client.ok("start_workflow", start("research", "full", "s1")).await;
    let args = json!({"outputs": {"notes": "pipe.md"}, "session_id": "s1"});
    let err = promptly(client.fail("finished_step", args)).await;
    assert_eq!(
        err,
        format!(
            "Error calling tool 'finished_step': Output 'notes': path 'pipe.md' cannot be used: {NOT_REGULAR}. Give a \
             regular file inside the project, relative to its root."
        )
    );
    let state: Value = read_json(&project.state_file("s1", "state.json"));
    assert_eq!(state["workflow_stack"][0]["current_step_id"], "gather");
    client.close().await;
}
