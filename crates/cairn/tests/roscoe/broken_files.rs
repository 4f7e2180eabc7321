//! Files that are not workflows where a workflow (or `roscoe.yaml`, or a skill) is expected: a directory named
//! `x.yaml`, a FIFO, a link to `/dev/zero`, a 50 MB file. Each is reported like any broken workflow file (listed with
//! an `error`, `invalid_config` when asked for) — never skipped in silence, never waited on, never read whole.

use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::runs_support::*;
use crate::support::*;

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Calls `tool`, failing the test if the server has not answered within a minute (a hang).
async fn answered(client: &Client, tool: &str, args: Value) -> Value {
    let call = async {
        let result = client.call(tool, args).await;
        serde_json::from_str::<Value>(&text(&result)).unwrap()
    };
    tokio::time::timeout(Duration::from_secs(60), call).await.unwrap_or_else(|_| panic!("{tool} hung"))
}

#[tokio::test]
async fn directories_fifos_devices_and_huge_files_are_reported_not_skipped_or_waited_on() {
    let env = Env::new();
    let repo = env.repo("proj");
    let cwd = s(&repo);
    write_workflow(&repo, "good", &simple("good"));
    let dir = repo.join(".roscoe/workflows");
    fs::create_dir(dir.join("folder.yaml")).unwrap();
    mkfifo(&dir.join("pipe.yaml"));
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.yml")).unwrap();
    // 50 MB without writing them: a sparse file.
    fs::File::create(dir.join("huge.yaml")).unwrap().set_len(50 * 1024 * 1024).unwrap();
    let client = env.connect().await;

    let listed = answered(&client, "list_workflows", json!({ "cwd": cwd })).await;
    let ids: Vec<&str> = listed.as_array().unwrap().iter().map(|w| w["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["folder", "good", "huge", "pipe", "zero"], "{listed}");
    let error_of = |id: &str| {
        let entry = listed.as_array().unwrap().iter().find(|w| w["id"] == id).unwrap();
        entry["error"].as_str().unwrap_or_else(|| panic!("no error for {id}: {listed}")).to_owned()
    };
    assert!(error_of("folder").contains("is a directory"), "{listed}");
    assert!(error_of("pipe").contains("not a regular file"), "{listed}");
    assert!(error_of("zero").contains("not a regular file"), "{listed}");
    assert!(error_of("huge").contains("larger than the 1 MiB"), "{listed}");
    assert!(listed[1]["error"].is_null(), "{listed}");

    for (id, says) in
        [("folder", "is a directory"), ("pipe", "not a regular file"), ("zero", "not a regular file"), ("huge", "1 MiB")]
    {
        let got = answered(&client, "get_workflow", json!({ "cwd": cwd, "id": id })).await;
        assert_eq!(got["code"], "invalid_config", "{id}: {got}");
        assert!(got["error"].as_str().unwrap().contains(says), "{id}: {got}");
        let validated = answered(&client, "validate_workflow", json!({ "cwd": cwd, "id": id })).await;
        assert_eq!(validated["code"], "invalid_config", "{id}: {validated}");
        let started = answered(&client, "start_workflow", json!({ "cwd": cwd, "id": id })).await;
        assert_eq!(started["code"], "invalid_config", "{id}: {started}");
        let tested = answered(&client, "test_workflow", json!({ "cwd": cwd, "id": id })).await;
        assert_eq!(tested["ok"], false, "{id}: {tested}");
        // The name is taken: a new workflow cannot be created over it.
        let created = answered(&client, "create_workflow", json!({ "cwd": cwd, "id": id, "yaml": simple(id) })).await;
        assert_eq!(created["code"], "conflict", "{id}: {created}");
    }

    // roscoe.yaml as a FIFO: the models section reports it, the call does not wait for a writer.
    mkfifo(&repo.join("roscoe.yaml"));
    let schema = answered(&client, "get_workflow_schema", json!({ "cwd": cwd })).await;
    assert!(schema["models"]["error"].as_str().is_some_and(|e| e.contains("not a regular file")), "{schema}");
    let linted = answered(&client, "lint_workflow", json!({ "cwd": cwd, "id": "good" })).await;
    assert_eq!(linted["errors"], json!([]), "{linted}");

    // A skill path that is a FIFO or an endless device: not a skill, said at once.
    mkfifo(&repo.join("pipe.md"));
    std::os::unix::fs::symlink("/dev/zero", repo.join("zero.md")).unwrap();
    for name in ["pipe.md", "zero.md"] {
        let converted = answered(&client, "convert_skill", json!({ "cwd": cwd, "skill_path": s(&repo.join(name)) })).await;
        assert_eq!(converted["code"], "not_a_skill", "{name}: {converted}");
    }
    let skills = answered(&client, "list_skills", json!({ "cwd": cwd })).await;
    assert_eq!(skills["count"], 0, "{skills}");
    client.close().await;
}
