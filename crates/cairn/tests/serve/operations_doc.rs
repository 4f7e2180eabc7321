//! docs/operations.md's commands, run as the page writes them, in order, through `bash` with `cairn` on `PATH`: on a
//! SQLite home always (a scraper's token, a server logging JSON, a scrape of `/metrics` with that token, a backup
//! taken while the server runs and checked, a restore, an export imported into a new home, a migration), and the
//! `sh postgres` blocks (pg_dump, pg_restore) on the test's PostgreSQL database when there is one. Only the port
//! (`0`, then the one the server took) is substituted.

use std::process::Stdio;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::database::TestDatabase;
use crate::deploy_doc::{bash, run, shell, tagged_sh_blocks};

#[tokio::test]
async fn the_commands_of_operations_md_work_as_written() {
    let (tmp, home, bin) = shell();

    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/operations.md")).unwrap();
    let blocks = tagged_sh_blocks(&doc);
    let (postgres, sqlite): (Vec<_>, Vec<_>) = blocks.into_iter().partition(|(tag, _)| tag == "postgres");
    let sqlite: Vec<String> = sqlite.into_iter().map(|(_, block)| block).collect();
    assert_eq!(sqlite.len(), 7, "token, serve, scrape, backup, restore, export and import, migrate: {sqlite:#?}");
    assert_eq!(postgres.len(), 2, "pg_dump, pg_restore: {postgres:#?}");

    // A scraper's token, then the server.
    run(&sqlite[0], &bin, &home, None).await;
    let token = std::fs::read_to_string(tmp.path().join("prometheus.token")).unwrap();
    assert!(token.starts_with("cairn_"), "the file holds the bearer token alone: {token}");
    assert!(sqlite[1].contains("cairn serve"), "{}", sqlite[1]);
    let mut server =
        bash(&sqlite[1].replace(":7777", ":0"), &bin, &home).stderr(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let port = loop {
        let line = lines.next_line().await.unwrap().expect("cairn serve exited before listening");
        let json: Value = serde_json::from_str(&line).expect("--log-format json writes JSON lines");
        if let Some((_, address)) = json["fields"]["message"].as_str().unwrap_or("").split_once("listening on http://") {
            break address.rsplit_once(':').unwrap().1.trim().to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

    let scraped = run(&sqlite[2].replace(":7777", &format!(":{port}")), &bin, &home, None).await;
    assert!(scraped.contains("cairn_db_pool_connections{state=\"idle\"}"), "{scraped}");
    let anonymous = reqwest::get(format!("http://127.0.0.1:{port}/metrics")).await.unwrap();
    assert_eq!(anonymous.status(), 401, "the scrape needed its token");

    // A backup while the server runs, checked.
    let backed_up = run(&sqlite[3], &bin, &home, None).await;
    assert!(backed_up.contains("ok: the database's structure and foreign keys are sound"), "{backed_up}");
    let checked = run("cairn db check --json --database-url sqlite://cairn-backup.db", &bin, &home, None).await;
    assert_eq!(serde_json::from_str::<Value>(&checked).unwrap(), serde_json::json!({"ok": true, "problems": []}));

    // Restore with the server stopped, then move the runs to a new home, then migrate.
    let _ = server.kill().await;
    let _ = server.wait().await;
    let restored = run(&sqlite[4], &bin, &home, None).await;
    assert!(restored.starts_with("ok: "), "{restored}");
    let imported = run(&sqlite[5], &bin, &home, None).await;
    assert!(imported.contains("imported 0 run(s)"), "{imported}");
    assert!(tmp.path().join("new-home/cairn.db").is_file(), "the import made the new home's database");
    let migrated = run(&sqlite[6], &bin, &home, None).await;
    assert!(migrated.starts_with("the database is up to date"), "{migrated}");

    let database = TestDatabase::fresh();
    let Some(url) = database.url() else {
        println!("the `sh postgres` blocks of docs/operations.md need PostgreSQL: set CAIRN_TEST_POSTGRES_URL");
        return;
    };
    run("cairn db migrate && cairn work account create --name dumped", &bin, &home, Some(url)).await;
    run(&postgres[0].1, &bin, &home, Some(url)).await;
    assert!(tmp.path().join("cairn.dump").is_file());
    run("cairn work account create --name after-the-dump", &bin, &home, Some(url)).await;
    run(&postgres[1].1, &bin, &home, Some(url)).await;
    let accounts = run("cairn work account list", &bin, &home, Some(url)).await;
    let accounts: Value = serde_json::from_str(&accounts).unwrap();
    let names: Vec<&str> = accounts["accounts"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["dumped"], "the restore brought the database back to the dump");
}
