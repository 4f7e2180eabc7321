//! `cairn export` → `cairn import` into a fresh `CAIRN_HOME` and database: `get_run_history` of a finished run and
//! of one waiting on a person answers the same on the new server, the workflow file comes along (0644), and a second
//! import of the same file is refused and changes nothing.

use serde_json::{Value, json};

use crate::cairn_serve::Served;
use crate::database::TestDatabase;
use crate::support::{SHIP, cairn, client, ok, token};

/// The run histories of `runs` on a server of `home`, asked with a new token.
async fn histories(home: &std::path::Path, database: &TestDatabase, runs: &[String]) -> Vec<Value> {
    let bearer = token(home, database, "reader", "roscoe:read").await;
    let mut command = cairn(home, database);
    command.arg("serve");
    let served = Served::start(command).await;
    let roscoe = client(served.url("/roscoe/mcp"), &bearer).await;
    let mut found = Vec::new();
    for run in runs {
        found.push(ok(&roscoe, "get_run_history", json!({"global": true, "run_id": run})).await);
    }
    let _ = roscoe.cancel().await;
    found
}

async fn import(home: &std::path::Path, database: &TestDatabase, file: &std::path::Path) -> std::process::Output {
    cairn(home, database).arg("import").arg(file).arg("--json").output().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_imported_into_a_fresh_home_gives_the_same_run_histories() {
    let tmp = tempfile::tempdir().unwrap();
    let (old_home, new_home) = (tmp.path().join("old"), tmp.path().join("new"));
    let (old_db, new_db) = (TestDatabase::fresh(), TestDatabase::fresh());
    std::fs::create_dir_all(old_home.join("workflows")).unwrap();
    std::fs::write(old_home.join("workflows/ship.yaml"), SHIP).unwrap();

    let runner = token(&old_home, &old_db, "runner", "roscoe:run").await;
    let mut command = cairn(&old_home, &old_db);
    command.arg("serve");
    let served = Served::start(command).await;
    let roscoe = client(served.url("/roscoe/mcp"), &runner).await;
    let mut runs = Vec::new();
    for _ in 0..2 {
        let started = ok(&roscoe, "start_workflow", json!({"global": true, "id": "ship"})).await;
        let run = started["runId"].as_str().unwrap().to_owned();
        ok(&roscoe, "advance_run", json!({"global": true, "run_id": run, "node_id": "draft", "response": "a haiku"})).await;
        runs.push(run);
    }
    let done = ok(&roscoe, "resume_run", json!({"global": true, "run_id": runs[0], "transition": "ship"})).await;
    assert_eq!(done["status"], "completed");
    let _ = roscoe.cancel().await;
    drop(served);
    let before = histories(&old_home, &old_db, &runs).await;

    let file = tmp.path().join("cairn.jsonl");
    let exported = cairn(&old_home, &old_db).args(["export", "--output"]).arg(&file).output().await.unwrap();
    let said = String::from_utf8_lossy(&exported.stderr);
    assert!(exported.status.success(), "export: {said}");
    assert!(said.contains("exported 1 workflow file(s), 2 run(s), ") && said.contains("cairn.jsonl"), "says what it wrote: {said}");
    let text = std::fs::read_to_string(&file).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["cairn_export"], 1, "{first}");

    let imported = import(&new_home, &new_db, &file).await;
    assert!(imported.status.success(), "import: {}", String::from_utf8_lossy(&imported.stderr));
    let report: Value = serde_json::from_slice(&imported.stdout).unwrap();
    assert_eq!(report["workflows"], 1, "{report}");
    assert_eq!(report["rows"]["workflow_runs"], 2, "{report}");
    let copied = new_home.join("workflows/ship.yaml");
    assert_eq!(std::fs::read_to_string(&copied).unwrap(), SHIP);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&copied).unwrap().permissions().mode() & 0o777, 0o644);
    }
    let after = histories(&new_home, &new_db, &runs).await;
    assert_eq!(after, before, "the histories round-trip");
    assert_eq!(after[0]["run"]["status"], "completed", "{}", after[0]);

    // The same runs again: refused as a whole, nothing written.
    let again = import(&new_home, &new_db, &file).await;
    assert!(!again.status.success());
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("nothing was imported"), "{stderr}");
    assert!(stderr.contains("is already in this database") && !stderr.contains("UNIQUE"), "names the row: {stderr}");
    assert!(stderr.contains("the project ") || stderr.contains(&format!("run {} of workflow ship", runs[0])), "{stderr}");
    let export_again = cairn(&new_home, &new_db).arg("export").output().await.unwrap();
    assert_eq!(String::from_utf8_lossy(&export_again.stdout), text, "the new home holds exactly the export");
}
