//! cairn's database: one sqlx pool over the embedded SQLite file (the default) or a Postgres server (by URL).
//!
//! [`Store::open`] connects, sets SQLite up for several processes at once (WAL, a busy timeout, foreign keys), and
//! applies the embedded migrations in `migrations/` (portable SQL: `$n` placeholders, JSON as TEXT, times as epoch-ms
//! BIGINT). Every state change runs in one [`Store::begin_write`] transaction — `BEGIN IMMEDIATE` on SQLite, so a
//! read-then-write never fails half-way on a stale snapshot — and conditional updates (compare-and-swap on a version
//! or a holder) make claims and run advances exactly-once across processes.
//!
//! SQL lives only in this crate: each surface gets a module of typed queries here, and its domain code never writes
//! SQL of its own.

pub mod observe;
pub mod runs;

pub mod work;

use std::path::Path;
use std::str::FromStr;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{Any, AnyPool, Executor, Transaction};

/// Run on every new SQLite connection: WAL so readers never block the writer, a 10 s wait for another process's
/// write lock, enforced foreign keys, and `synchronous = NORMAL` (durable across a process kill under WAL).
const SQLITE_SETUP: &str = "PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON; \
                            PRAGMA synchronous = NORMAL;";

/// The migrations every backend runs, embedded in the binary.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Which database server a [`Store`] talks to; the one place where the dialects differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The embedded SQLite file (`sqlite://…`).
    Sqlite,
    /// A PostgreSQL server (`postgres://…`), for several nodes sharing one database.
    Postgres,
}

/// Why the database could not be opened or used.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The URL names no database cairn supports.
    #[error(
        "unsupported database URL '{0}': use sqlite://PATH (the default is $CAIRN_HOME/cairn.db) or postgres://USER@HOST/DB"
    )]
    UnsupportedUrl(String),
    /// The SQLite file's folder could not be created.
    #[error("cannot create the database folder {path}: {source}")]
    Folder {
        /// The folder.
        path: String,
        /// What the file system said.
        source: std::io::Error,
    },
    /// Connecting failed.
    #[error("cannot open the database {url}: {source}")]
    Connect {
        /// The URL, without its password.
        url: String,
        /// What the driver said.
        source: sqlx::Error,
    },
    /// A migration failed; the database is left at the last migration that applied.
    #[error("cannot migrate the database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A query failed.
    #[error("database error: {0}")]
    Query(#[from] sqlx::Error),
}

/// An open, migrated database. Cheap to clone (the pool is shared).
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
}

impl Store {
    /// The default database URL: the SQLite file `cairn.db` in `cairn_home`.
    pub fn default_url(cairn_home: &Path) -> String {
        format!("sqlite://{}?mode=rwc", cairn_home.join("cairn.db").display())
    }

    /// Connects to `url` (`sqlite://PATH` or `postgres://…`) and applies every pending migration.
    pub async fn open(url: &str) -> Result<Store, Error> {
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else {
            return Err(Error::UnsupportedUrl(redact(url)));
        };
        if backend == Backend::Sqlite {
            create_sqlite_folder(url)?;
        }
        sqlx::any::install_default_drivers();
        let connect = |source| Error::Connect { url: redact(url), source };
        let options = AnyConnectOptions::from_str(url).map_err(connect)?;
        let pool = AnyPoolOptions::new()
            .max_connections(if backend == Backend::Sqlite { 8 } else { 16 })
            .after_connect(move |connection, _| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        connection.execute(SQLITE_SETUP).await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .map_err(connect)?;
        MIGRATOR.run(&pool).await?;
        Ok(Store { pool, backend })
    }

    /// The connection pool, for reads.
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Which server this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Starts a transaction for a state change: `BEGIN IMMEDIATE` on SQLite (the write lock is taken up front, waiting
    /// up to the busy timeout), a plain `BEGIN` on Postgres (conditional updates do the rest).
    pub async fn begin_write(&self) -> Result<Transaction<'static, Any>, sqlx::Error> {
        match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.pool.begin().await,
        }
    }

    /// Closes every connection (waits for the ones in use to be returned).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Creates the folder of a `sqlite://PATH` database, so a fresh `$CAIRN_HOME` just works.
fn create_sqlite_folder(url: &str) -> Result<(), Error> {
    let path = url.trim_start_matches("sqlite:").trim_start_matches("//");
    let path = path.split('?').next().unwrap_or_default();
    if path.is_empty() || path == ":memory:" {
        return Ok(());
    }
    match Path::new(path).parent() {
        Some(folder) if !folder.as_os_str().is_empty() => {
            std::fs::create_dir_all(folder).map_err(|source| Error::Folder {
                path: folder.display().to_string(),
                source,
            })
        }
        _ => Ok(()),
    }
}

/// `url` with any password replaced by `***`, for error messages.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let Some((credentials, host)) = rest.split_once('@') else {
        return url.to_string();
    };
    match credentials.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Row;

    #[tokio::test]
    async fn opens_a_fresh_sqlite_file_in_wal_mode_and_writes_in_immediate_transactions() {
        let home = tempfile::tempdir().unwrap();
        let url = Store::default_url(&home.path().join("nested"));
        let store = Store::open(&url).await.unwrap();
        assert_eq!(store.backend(), Backend::Sqlite);
        let mode: String = sqlx::query("PRAGMA journal_mode")
            .fetch_one(store.pool())
            .await
            .unwrap()
            .get(0);
        assert_eq!(mode, "wal");

        let mut tx = store.begin_write().await.unwrap();
        sqlx::query("CREATE TABLE t (n BIGINT NOT NULL)").execute(&mut *tx).await.unwrap();
        sqlx::query("INSERT INTO t (n) VALUES ($1)").bind(7_i64).execute(&mut *tx).await.unwrap();
        tx.commit().await.unwrap();
        store.close().await;

        let again = Store::open(&url).await.unwrap();
        let n: i64 = sqlx::query("SELECT n FROM t").fetch_one(again.pool()).await.unwrap().get(0);
        assert_eq!(n, 7);
    }

    #[tokio::test]
    async fn names_what_is_wrong_with_a_bad_url() {
        let err = Store::open("mysql://root:secret@db/cairn").await.unwrap_err();
        let text = err.to_string();
        assert!(text.contains("unsupported database URL"), "{text}");
        assert!(text.contains("root:***@db") && !text.contains("secret"), "{text}");
    }
}
