//! Which database a test's cairn processes use: the SQLite file in their `$CAIRN_HOME` (the default), or — when
//! `CAIRN_TEST_POSTGRES_URL` names a PostgreSQL server's admin URL (`.ci/postgres.sh` prints one) — a fresh Postgres
//! database of the test's own, dropped when the test ends.
//!
//! Support code applies [`TestDatabase::apply`] to every cairn command it builds, so the same test runs on both.

#![allow(dead_code, reason = "each test binary that includes this file uses part of it")]

use std::process::Command as StdCommand;
use std::sync::atomic::{AtomicU32, Ordering};

/// The environment variable holding the Postgres admin URL; unset means SQLite.
pub const POSTGRES_ENV: &str = "CAIRN_TEST_POSTGRES_URL";

/// A test's database. Cheap to hold; drops its Postgres database (if any) on drop.
#[derive(Debug)]
pub struct TestDatabase {
    postgres: Option<Postgres>,
}

#[derive(Debug)]
struct Postgres {
    admin_url: String,
    name: String,
    url: String,
}

impl TestDatabase {
    /// A fresh database for one test: a new Postgres database when `CAIRN_TEST_POSTGRES_URL` is set, else SQLite.
    pub fn fresh() -> TestDatabase {
        let Some(admin_url) = std::env::var(POSTGRES_ENV).ok().filter(|v| !v.is_empty()) else {
            return TestDatabase { postgres: None };
        };
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let name = format!(
            "cairn_test_{}_{}_{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        psql(&admin_url, &format!("CREATE DATABASE {name}"));
        let base = admin_url.rsplit_once('/').map(|(base, _)| base).unwrap_or(&admin_url);
        let url = format!("{base}/{name}");
        TestDatabase { postgres: Some(Postgres { admin_url, name, url }) }
    }

    /// The `--database-url` value: the Postgres database's URL, or `None` for the default SQLite file.
    pub fn url(&self) -> Option<&str> {
        self.postgres.as_ref().map(|p| p.url.as_str())
    }

    /// Whether this test runs on Postgres.
    pub fn is_postgres(&self) -> bool {
        self.postgres.is_some()
    }

    /// Points a cairn command at this database through `CAIRN_DATABASE_URL` (or clears it for SQLite).
    pub fn apply<'c>(&self, command: &'c mut tokio::process::Command) -> &'c mut tokio::process::Command {
        match self.url() {
            Some(url) => command.env("CAIRN_DATABASE_URL", url),
            None => command.env_remove("CAIRN_DATABASE_URL"),
        }
    }

    /// [`TestDatabase::apply`] for a std command.
    pub fn apply_std<'c>(&self, command: &'c mut StdCommand) -> &'c mut StdCommand {
        match self.url() {
            Some(url) => command.env("CAIRN_DATABASE_URL", url),
            None => command.env_remove("CAIRN_DATABASE_URL"),
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Some(pg) = &self.postgres {
            // FORCE ends the connections of servers that are still shutting down.
            psql(&pg.admin_url, &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", pg.name));
        }
    }
}

/// Runs one statement with `psql` against `url`, panicking with its output on failure.
fn psql(url: &str, sql: &str) {
    let output = StdCommand::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql])
        .output()
        .expect("run psql (install PostgreSQL's client, or unset CAIRN_TEST_POSTGRES_URL)");
    assert!(
        output.status.success(),
        "psql {sql:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
