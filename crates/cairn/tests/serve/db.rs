//! `cairn db migrate` and migrating on start: several processes at once on a fresh database (SQLite, or Postgres when
//! `CAIRN_TEST_POSTGRES_URL` is set) all succeed, each migration is applied exactly once, and the schema works.

use futures::future::join_all;
use serde_json::Value;
use tokio::process::Command;

use crate::cairn_serve::Served;
use crate::database::TestDatabase;

fn cairn(home: &std::path::Path, database: &TestDatabase, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.args(args).env("CAIRN_HOME", home).kill_on_drop(true);
    database.apply(&mut command);
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_migrations_at_once_on_a_fresh_database_apply_each_migration_once() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let database = TestDatabase::fresh();
    let outputs = join_all((0..4).map(|_| cairn(&home, &database, &["db", "migrate", "--json"]).output())).await;
    let mut applied: Vec<i64> = Vec::new();
    let mut version = 0;
    for output in outputs {
        let output = output.unwrap();
        assert!(output.status.success(), "cairn db migrate: {}", String::from_utf8_lossy(&output.stderr));
        let report: Value = serde_json::from_slice(&output.stdout).expect("one JSON object");
        version = report["version"].as_i64().unwrap();
        applied.extend(report["applied"].as_array().unwrap().iter().map(|m| m["version"].as_i64().unwrap()));
    }
    let mut unique = applied.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(applied.len(), unique.len(), "no migration applied twice: {applied:?}");
    assert_eq!(unique.last(), Some(&version), "the last migration was applied");

    let again = cairn(&home, &database, &["db", "migrate"]).output().await.unwrap();
    assert!(again.status.success());
    assert_eq!(String::from_utf8_lossy(&again.stdout), format!("the database is up to date (version {version})\n"));
    let account = cairn(&home, &database, &["work", "account", "create", "--name", "acme"]).output().await.unwrap();
    assert!(account.status.success(), "the schema works: {}", String::from_utf8_lossy(&account.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_starting_together_on_a_fresh_database_all_migrate_and_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let database = TestDatabase::fresh();
    let servers = join_all((0..3).map(|_| Served::start(cairn(&home, &database, &["serve"])))).await;
    for served in &servers {
        let response = reqwest::get(served.url("/healthz")).await.unwrap();
        assert_eq!(response.status(), 200, "{}", served.base);
    }
}
