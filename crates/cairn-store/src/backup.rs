//! A consistent copy of the database while servers keep writing, and an integrity check.
//!
//! On SQLite, [`Store::backup`] runs `VACUUM INTO`: it reads the database in one read transaction, so the copy holds
//! exactly the writes committed before it began (WAL mode lets writers go on meanwhile), and writes a compact,
//! self-contained file (no `-wal` beside it). [`Store::check`] runs `PRAGMA integrity_check` and `PRAGMA
//! foreign_key_check`. PostgreSQL has its own tools for both (`pg_dump`, `pg_amcheck`): these refuse there and name
//! them.

use std::path::Path;

use sqlx::Row;

use crate::{Backend, Error, Store};

/// What [`Store::check`] found: nothing (`problems` empty) or the database's own reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// Each problem SQLite reported, one line each.
    pub problems: Vec<String>,
}

impl Store {
    /// Writes a consistent copy of the SQLite database to `target`, which must not exist yet.
    pub async fn backup(&self, target: &Path) -> Result<(), Error> {
        if self.backend() != Backend::Sqlite {
            return Err(Error::Unsupported(
                "cairn db backup copies SQLite databases; back up PostgreSQL with pg_dump (docs/operations.md)".into(),
            ));
        }
        if target.exists() {
            return Err(Error::Unsupported(format!(
                "{} already exists; name a new file (a backup never overwrites one)",
                target.display()
            )));
        }
        let path = target.to_str().ok_or_else(|| {
            Error::Unsupported(format!("{} is not valid UTF-8; name a plainer path", target.display()))
        })?;
        // `VACUUM INTO` takes an expression: the path is bound, never spliced into the statement.
        sqlx::query("VACUUM INTO $1").bind(path).execute(self.pool()).await?;
        Ok(())
    }

    /// Checks the SQLite database's structure and foreign keys.
    pub async fn check(&self) -> Result<Checked, Error> {
        if self.backend() != Backend::Sqlite {
            return Err(Error::Unsupported(
                "cairn db check checks SQLite databases; check PostgreSQL with pg_amcheck (docs/operations.md)".into(),
            ));
        }
        let mut problems = Vec::new();
        for row in sqlx::query("PRAGMA integrity_check").fetch_all(self.pool()).await? {
            let line: String = row.try_get(0)?;
            if line != "ok" {
                problems.push(line);
            }
        }
        for row in sqlx::query("PRAGMA foreign_key_check").fetch_all(self.pool()).await? {
            let table: String = row.try_get(0)?;
            let parent: String = row.try_get(2)?;
            problems.push(format!("a row of {table} names a missing row of {parent}"));
        }
        Ok(Checked { problems })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_backup_holds_what_was_committed_and_passes_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&Store::default_url(dir.path())).await.unwrap();
        let mut tx = store.begin_write().await.unwrap();
        sqlx::query("CREATE TABLE t (n BIGINT NOT NULL)").execute(&mut *tx).await.unwrap();
        sqlx::query("INSERT INTO t (n) VALUES (41), (42)").execute(&mut *tx).await.unwrap();
        tx.commit().await.unwrap();
        let target = dir.path().join("it's a backup.db");
        store.backup(&target).await.unwrap();
        let refused = store.backup(&target).await.unwrap_err().to_string();
        assert!(refused.contains("already exists"), "{refused}");
        store.close().await;

        let copy = Store::open(&format!("sqlite://{}", target.display())).await.unwrap();
        assert_eq!(copy.check().await.unwrap().problems, Vec::<String>::new());
        let n: i64 = sqlx::query("SELECT SUM(n) FROM t").fetch_one(copy.pool()).await.unwrap().get(0);
        assert_eq!(n, 83);
    }
}
