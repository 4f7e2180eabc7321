//! `cairn db backup` while a server keeps writing: the copy opens, passes `cairn db check`, and holds every write
//! the server acknowledged before the backup began. On PostgreSQL the commands refuse and name `pg_dump` /
//! `pg_amcheck`.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::process::Command;

use crate::cairn_serve::Served;
use crate::database::TestDatabase;
use crate::rest::post_json;

/// How long the writers write.
const LOAD: Duration = Duration::from_secs(20);

fn cairn(home: &std::path::Path, database: &TestDatabase) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.env("CAIRN_HOME", home);
    database.apply_std(&mut command);
    command
}

#[tokio::test]
async fn a_backup_taken_under_load_holds_every_acknowledged_write() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let database = TestDatabase::fresh();
    let backup = tmp.path().join("backup.db");
    if database.is_postgres() {
        let out = cairn(&home, &database).args(["db", "backup"]).arg(&backup).output().unwrap();
        assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("pg_dump"));
        let out = cairn(&home, &database).args(["db", "check"]).output().unwrap();
        assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("pg_amcheck"));
        return;
    }
    let mut serve = Command::new(env!("CARGO_BIN_EXE_cairn"));
    serve.args(["serve", "--rate-limit", "0"]).env("CAIRN_HOME", &home);
    database.apply(&mut serve);
    let served = Served::start(serve).await;
    let made = cairn(&home, &database)
        .args(["work", "token", "create", "--principal", "loader", "--kind", "service", "--scopes", "mcp:write,decisions:write"])
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let token = serde_json::from_slice::<Value>(&made.stdout).unwrap()["token"].as_str().unwrap().to_owned();
    let client = reqwest::Client::new();
    let space: Value =
        post_json(&client, served.url("/api/spaces"), &token, &json!({"name": "load"})).await;
    let space_id = space["space"]["id"].as_str().unwrap().to_owned();

    // Writers: each acknowledged item, with the moment its answer arrived.
    let acknowledged: Arc<Mutex<Vec<(Instant, String)>>> = Arc::default();
    let started = Instant::now();
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            let (client, url, token, space_id, acknowledged) =
                (client.clone(), served.url("/api/work/items"), token.clone(), space_id.clone(), acknowledged.clone());
            tokio::spawn(async move {
                let mut n = 0;
                while started.elapsed() < LOAD {
                    n += 1;
                    let body = json!({"space_id": space_id, "title": format!("writer {writer} item {n}")});
                    let answer = client.post(&url).bearer_auth(&token).json(&body).send().await.unwrap();
                    assert_eq!(answer.status(), 201);
                    let item: Value = answer.json().await.unwrap();
                    acknowledged.lock().unwrap().push((Instant::now(), item["id"].as_str().unwrap().to_owned()));
                }
            })
        })
        .collect();
    tokio::time::sleep(LOAD / 2).await;
    let backup_started = Instant::now();
    let copied = cairn(&home, &database).args(["db", "backup"]).arg(&backup).output().unwrap();
    assert!(copied.status.success(), "{}", String::from_utf8_lossy(&copied.stderr));
    for writer in writers {
        writer.await.unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    let before: BTreeSet<String> =
        acknowledged.iter().filter(|(at, _)| *at < backup_started).map(|(_, id)| id.clone()).collect();
    assert!(before.len() > 50 && acknowledged.len() > before.len(), "writes before and after the backup began");

    let url = format!("sqlite://{}", backup.display());
    let checked = cairn(&home, &database).args(["db", "check", "--database-url", &url]).output().unwrap();
    assert!(checked.status.success() && String::from_utf8_lossy(&checked.stdout).starts_with("ok"), "{checked:?}");

    // The copy, served on its own, holds every item acknowledged before the backup began.
    let restored_home = tmp.path().join("restored");
    let mut serve = Command::new(env!("CARGO_BIN_EXE_cairn"));
    serve.args(["serve", "--rate-limit", "0", "--database-url", &url]).env("CAIRN_HOME", &restored_home);
    let restored = Served::start(serve).await;
    let mut found = BTreeSet::new();
    let mut page = String::new();
    loop {
        let query = format!("/api/work/items?page_size=200&space_id={space_id}&page_token={page}");
        let listed: Value = client.get(restored.url(&query)).bearer_auth(&token).send().await.unwrap().json().await.unwrap();
        found.extend(listed["items"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap().to_owned()));
        page = listed["next_page_token"].as_str().unwrap_or_default().to_owned();
        if page.is_empty() {
            break;
        }
    }
    let missing: Vec<&String> = before.difference(&found).collect();
    assert!(missing.is_empty(), "{} acknowledged item(s) missing from the backup: {missing:?}", missing.len());
}
