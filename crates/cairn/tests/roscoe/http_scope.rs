//! What a caller of `cairn serve` may name (issue 33): `cwd` only inside the `--project` folders (or `global: true`),
//! `skill_path` only inside the scope's project or the standard skill roots, the REST API's `?project=` only a served
//! project. Anything else is refused before the disk is touched; stdio servers keep reaching any folder.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::runs_support::write_workflow;
use crate::support::*;

/// A workflow of one human step: nothing that needs `roscoe:exec`.
const ASK: &str = "initial: ask\nnodes:\n  ask:\n    type: human\n    config: { prompt: Go? }\n    \
    transitions: { go: $end }\n";

fn skill(path: &Path, name: &str, body: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, format!("---\nname: {name}\ndescription: Helps with {name}\n---\n{body}")).unwrap();
}

/// Everything under `dir`, for checking that nothing was created there.
fn tree(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in walk(dir) {
        found.push(entry.strip_prefix(dir).unwrap().display().to_string());
    }
    found.sort();
    found
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        out.push(path.clone());
        if entry.file_type().unwrap().is_dir() {
            out.extend(walk(&path));
        }
    }
    out
}

fn refused(error: &Value, cwd: &str) {
    assert_eq!(error["code"], "not_a_project", "{error}");
    assert_eq!(error["cwd"], cwd, "{error}");
    assert!(error["error"].as_str().unwrap().contains("--project"), "the error says how to serve a folder: {error}");
}

#[tokio::test]
async fn over_http_a_cwd_outside_the_served_projects_is_refused_without_touching_the_disk() {
    let env = Env::new();
    let root = env.repo("proj");
    let outside = env.tmp.path().join("outside");
    fs::create_dir_all(outside.join("sub")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
    let served = env.serve(&["--require-auth"], &[]).await;
    let writer = Client::http(&served, &env.token("writer", "roscoe:write,roscoe:run").await).await;
    let before = tree(&outside);

    let escapes = [
        s(&outside),
        s(&outside.join("sub")),
        s(&outside.join("missing/dir")),
        format!("{}/../outside", s(&root)),
        s(&root.join("link")),
        s(&root.join("link/sub")),
        "/".to_owned(),
    ];
    for cwd in &escapes {
        let created = writer.fail("create_workflow", json!({"cwd": cwd, "id": "planted", "yaml": ASK, "source": "repo"})).await;
        refused(&created, cwd);
        refused(&writer.fail("list_workflows", json!({"cwd": cwd})).await, cwd);
        refused(&writer.fail("list_skills", json!({"cwd": cwd})).await, cwd);
        refused(&writer.fail("start_workflow", json!({"cwd": cwd, "id": "ask"})).await, cwd);
    }
    assert_eq!(tree(&outside), before, "nothing was created outside the project");
    assert!(!outside.join("missing").exists());

    // The served project, a folder inside it and global scope work as before.
    let inside = root.join("src");
    fs::create_dir_all(&inside).unwrap();
    let created = writer.ok("create_workflow", json!({"cwd": s(&inside), "id": "ask", "yaml": ASK, "source": "repo"})).await;
    assert_eq!(created["path"], s(&root.join(".roscoe/workflows/ask.yaml")));
    let listed = writer.ok("list_workflows", json!({"cwd": s(&root)})).await;
    assert!(listed.as_array().unwrap().iter().any(|w| w["id"] == "ask"), "{listed}");
    writer.ok("list_workflows", json!({"global": true})).await;
    writer.close().await;

    // stdio: the local user may name any folder.
    let stdio = env.connect().await;
    let created = stdio.ok("create_workflow", json!({"cwd": s(&outside), "id": "mine", "yaml": ASK, "source": "repo"})).await;
    assert_eq!(created["path"], s(&outside.canonicalize().unwrap().join(".roscoe/workflows/mine.yaml")));
    stdio.close().await;
}

#[tokio::test]
async fn a_server_without_project_folders_serves_only_global_scope() {
    let env = Env::new();
    let served = env.serve(&["--require-auth"], &[]).await;
    let writer = Client::http(&served, &env.token("writer", "roscoe:write").await).await;
    let dir = env.tmp.path().join("anywhere");
    fs::create_dir_all(&dir).unwrap();
    refused(&writer.fail("create_workflow", json!({"cwd": s(&dir), "id": "x", "yaml": ASK, "source": "repo"})).await, &s(&dir));
    assert!(!dir.join(".roscoe").exists());
    writer.ok("create_workflow", json!({"global": true, "id": "x", "yaml": ASK})).await;
    writer.close().await;
}

#[tokio::test]
async fn over_http_a_skill_path_outside_the_project_and_the_skill_roots_is_never_read() {
    let env = Env::new();
    let root = env.repo("proj");
    // HOME of the server is the test's git home: its ~/.claude/skills is a standard skill root.
    let home_skill = env.tmp.path().join("git-home/.claude/skills/mine/SKILL.md");
    skill(&home_skill, "mine", "Mine.\n");
    skill(&root.join("docs/solo.md"), "solo", "Do one thing.\n");
    let secret = env.tmp.path().join("private/SKILL.md");
    skill(&secret, "secret", "TOP-SECRET-LINE\n");
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o600)).unwrap();
    let linked = root.join("docs/linked.md");
    std::os::unix::fs::symlink(&secret, &linked).unwrap();
    let served = env.serve(&["--require-auth"], &[]).await;
    let reader = Client::http(&served, &env.token("reader", "roscoe:read").await).await;
    let writer = Client::http(&served, &env.token("writer", "roscoe:write").await).await;

    let cwd = s(&root);
    let outside = [s(&secret), "../private/SKILL.md".to_owned(), s(&linked)];
    for (scope, path) in [(json!({"global": true}), s(&secret))]
        .into_iter()
        .chain(outside.iter().map(|p| (json!({"cwd": cwd}), p.clone())))
    {
        let mut args = scope.clone();
        args["skill_path"] = json!(path);
        let result = reader.call("convert_skill", args.clone()).await;
        let body = text(&result);
        assert_eq!(result.is_error, Some(true), "{body}");
        assert!(!body.contains("TOP-SECRET-LINE"), "{body}");
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!((body["stage"].as_str(), body["code"].as_str()), (Some("resolve"), Some("skill_outside_roots")), "{body}");
        args["completion"] = json!("```yaml\nname: x\ninitial: a\nnodes:\n  a:\n    type: human\n    config: { prompt: Go? }\n    transitions: { go: $end }\n```");
        args["id"] = json!("leak");
        let finalized = writer.call("finalize_skill_conversion", args).await;
        assert_eq!(finalized.is_error, Some(true), "{}", text(&finalized));
        assert!(!text(&finalized).contains("TOP-SECRET-LINE"));
        assert_eq!(serde_json::from_str::<Value>(&text(&finalized)).unwrap()["code"], "skill_outside_roots");
    }
    assert!(!root.join(".roscoe").exists() && !env.home().join("workflows/leak.yaml").exists(), "nothing was written");

    // A skill in the project or in a standard skill root is read as before.
    let handback = reader.ok("convert_skill", json!({"cwd": cwd, "skill_path": s(&root.join("docs/solo.md"))})).await;
    assert_eq!(handback["action"], "run_completion");
    let handback = reader.ok("convert_skill", json!({"global": true, "skill_path": s(&home_skill)})).await;
    assert_eq!(handback["action"], "run_completion");
    reader.close().await;
    writer.close().await;
}

#[tokio::test]
async fn the_rest_api_names_only_served_projects() {
    let env = Env::new();
    let served_root = env.repo("served");
    let served = env.serve(&[], &[]).await;
    // A project the local user started a run in over stdio is known to the database, but not served.
    let other = env.tmp.path().join("other");
    fs::create_dir_all(&other).unwrap();
    write_workflow(&other, "ask", ASK);
    let stdio = env.connect().await;
    let started = stdio.ok("start_workflow", json!({"cwd": s(&other), "id": "ask"})).await;
    let other_id = started["url"].as_str().unwrap().rsplit("project=").next().unwrap().to_owned();
    stdio.close().await;

    let http = reqwest::Client::new();
    let projects: Value = http.get(served.url("/api/projects")).send().await.unwrap().json().await.unwrap();
    let ids: Vec<&str> = projects.as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert!(!ids.contains(&other_id.as_str()), "{projects}");
    assert_eq!(projects[1]["rootPath"], s(&served_root), "{projects}");
    for path in [format!("/api/workflows?project={other_id}"), format!("/api/runs?project={other_id}")] {
        let answer = http.get(served.url(&path)).send().await.unwrap();
        assert_eq!(answer.status(), 404, "{path}");
    }
    let answer = http
        .post(served.url(&format!("/api/workflows?project={other_id}")))
        .json(&json!({"id": "planted", "yaml": ASK, "source": "repo"}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 404);
    assert!(!other.join(".roscoe/workflows/planted.yaml").exists());
    let listed = http.get(served.url(&format!("/api/workflows?project={}", projects[1]["id"].as_str().unwrap()))).send().await.unwrap();
    assert_eq!(listed.status(), 200);
}
