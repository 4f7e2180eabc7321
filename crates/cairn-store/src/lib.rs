//! cairn's database: one sqlx pool over the embedded SQLite file (the default) or a Postgres server (by URL).
//!
//! [`Store::open`] connects, sets SQLite up for several processes at once (WAL, a busy timeout, foreign keys), and
//! applies the embedded migrations in `migrations/` (portable SQL: `$n` placeholders, JSON as TEXT, times as epoch-ms
//! BIGINT) — safely when several processes start at once ([`Store::migrate`]). Every state change runs in one
//! [`Store::begin_write`] transaction, and conditional updates (compare-and-swap on a version or a holder, unique
//! keys) make claims and run advances exactly-once across processes on both backends.
//!
//! The two backends run the same migrations and queries; where they must differ — write transactions, row locks,
//! the migration lock, connection setup — is [`dialect`], and nowhere else.
//!
//! SQL lives only in this crate: each surface gets a module of typed queries here, and its domain code never writes
//! SQL of its own. [`changes`] tells live views what changed (LISTEN/NOTIFY on Postgres); [`sessions`] keeps MCP
//! sessions so that any node sharing the database can continue them; [`audit`] records who did what.

pub mod approvals;
pub mod audit;
mod backup;
pub mod batch;
pub mod changes;
pub mod dialect;
mod lane;
pub mod observe;
pub mod runs;
pub mod schedules;
pub mod sessions;
mod sqlite_file;
mod stats;
pub mod transfer;
pub mod webhooks;
mod write_tx;
mod writer;
#[cfg(test)]
mod testing;

pub mod work;

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyPool};

use crate::batch::Batch;
use crate::changes::Changes;
use crate::lane::Lane;

pub use backup::Checked;
pub use dialect::Backend;
pub use write_tx::WriteTx;

use crate::writer::Writer;

/// The migrations every backend runs, embedded in the binary.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

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
    /// What was asked does not apply here (the message says what to do instead).
    #[error("{0}")]
    Unsupported(String),
    /// Rows to import do not fit the database (nothing was written).
    #[error("cannot import: {0}; nothing was imported")]
    Import(String),
}

impl Error {
    /// Whether a query broke a unique constraint: two writers raced to insert the same key, and this one lost (it
    /// rolls back and retries from a fresh read).
    pub fn is_unique_violation(&self) -> bool {
        match self {
            Error::Query(sqlx::Error::Database(db)) => db.is_unique_violation(),
            _ => false,
        }
    }
}

/// A migration [`Store::migrate`] applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedMigration {
    /// Its version (the timestamp its file name starts with).
    pub version: i64,
    /// Its description (the rest of the file name).
    pub description: String,
}

/// An open, migrated database. Cheap to clone (the pool is shared).
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    changes: Changes,
    /// SQLite's one writer connection; `None` on Postgres.
    writer: Option<Writer>,
    /// Pooled connections handed back clean, for the next [`Store::read`].
    lane: Arc<Lane>,
}

impl Store {
    /// The default database URL: the SQLite file `cairn.db` in `cairn_home`.
    pub fn default_url(cairn_home: &Path) -> String {
        format!("sqlite://{}?mode=rwc", cairn_home.join("cairn.db").display())
    }

    /// Connects to `url` (`sqlite://PATH` or `postgres://…`) and applies every pending migration.
    pub async fn open(url: &str) -> Result<Store, Error> {
        let store = Store::connect(url).await?;
        store.migrate().await?;
        Ok(store)
    }

    /// Connects to `url` without migrating (for [`Store::migrate`] to report what it applies).
    pub async fn connect(url: &str) -> Result<Store, Error> {
        let backend = Backend::from_url(url).ok_or_else(|| Error::UnsupportedUrl(redact(url)))?;
        let creating;
        let target = if backend == Backend::Sqlite {
            sqlite_file::prepare(url)?;
            creating = creating_sqlite_file(url);
            creating.as_str()
        } else {
            url
        };
        sqlx::any::install_default_drivers();
        let connect = |source| Error::Connect { url: redact(url), source };
        let options = AnyConnectOptions::from_str(target).map_err(connect)?;
        let pool = AnyPoolOptions::new()
            .max_connections(backend.max_connections())
            // No ping before handing a connection out. SQLite's are open files that cannot go stale, and the ping
            // would double the round trips to their threads. On Postgres it was one round trip more for every query
            // (a claim makes several); a connection the server cut fails the one query that meets it and is dropped,
            // and the pool closes idle ones after 10 minutes and every one after 30.
            .test_before_acquire(false)
            .after_connect(move |connection, _| Box::pin(dialect::set_up(backend, connection)))
            .connect_with(options.clone())
            .await
            .map_err(connect)?;
        let writer = match backend {
            Backend::Sqlite => Some(Writer::connect(&options).await.map_err(connect)?),
            Backend::Postgres => None,
        };
        let changes = Changes::new(backend, url, &pool);
        let lane = Arc::new(Lane::new(backend.max_connections()));
        Ok(Store { pool, backend, changes, writer, lane })
    }

    /// Applies the embedded migrations that are still pending, oldest first, and returns them (empty when the
    /// database was up to date). Safe to run from several processes at once: they take turns under the backend's
    /// migration lock, and the later ones find nothing left to do.
    pub async fn migrate(&self) -> Result<Vec<AppliedMigration>, Error> {
        self.backend.migrate(&self.pool, &MIGRATOR).await
    }

    /// Every migration this build knows, oldest first: `(version, description)`.
    pub fn known_migrations() -> Vec<(i64, String)> {
        MIGRATOR.iter().map(|m| (m.version, m.description.to_string())).collect()
    }

    /// Answers when the database does (for health checks).
    pub async fn ping(&self) -> Result<(), Error> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
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
    /// up to the busy timeout) on this process's one writer connection, held until the transaction ends (see
    /// [`WriteTx`]); a plain `BEGIN` on a pooled Postgres connection, where reads that decide a write lock their rows
    /// ([`Backend::lock_rows`]) and conditional updates do the rest.
    pub async fn begin_write(&self) -> Result<WriteTx, Error> {
        match &self.writer {
            Some(writer) => Ok(writer.begin().await?),
            None => Ok(WriteTx::pooled(self.pool.begin().await?)),
        }
    }

    /// Runs `batch` as a write transaction of its own and returns how many rows each statement changed. On SQLite
    /// the batch joins the writer's queue and commits with whatever other batches are waiting, in one query
    /// ([`writer`]): the write lock is held for one hand-off to the connection's thread instead of one per statement.
    /// On Postgres a batch declared [`Batch::one_snapshot`] is one statement on a pooled connection ([`Store::read`]
    /// gives it, [`Store::write_on`] hands it back), a transaction by itself.
    pub async fn write(&self, batch: Batch) -> Result<Vec<u64>, Error> {
        match &self.writer {
            Some(writer) => Ok(writer.write(batch).await?),
            None => self.write_on(self.read().await?, batch).await,
        }
    }

    /// A pooled connection for reads: one an item change handed back ([`lane`]), or else one from the pool.
    pub async fn read(&self) -> Result<PoolConnection<Any>, Error> {
        match self.lane.take() {
            Some(conn) => Ok(conn),
            None => Ok(self.pool.acquire().await?),
        }
    }

    /// Hands back `conn`, from [`Store::read`], whose last statement was answered: the next read takes it without
    /// the round trip the pool spends checking every connection returned to it ([`lane`]).
    pub fn release(&self, conn: PoolConnection<Any>) {
        self.lane.put(conn);
    }

    /// [`Store::write`], on Postgres on `conn`: a connection from [`Store::read`] that read what decided the write,
    /// so that one connection serves both; it is [released](Store::release) once the write is done. On SQLite `conn`
    /// is released first and the batch goes to the writer, as [`Store::write`] sends it.
    pub async fn write_on(&self, mut conn: PoolConnection<Any>, batch: Batch) -> Result<Vec<u64>, Error> {
        let changed = match &self.writer {
            Some(writer) => {
                self.release(conn);
                return Ok(writer.write(batch).await?);
            }
            None if batch.is_one_snapshot() => batch.run(&mut conn).await?,
            None => {
                let mut tx = sqlx::Connection::begin(&mut *conn).await?;
                let changed = batch.run(&mut tx).await?;
                tx.commit().await?;
                changed
            }
        };
        self.release(conn);
        Ok(changed)
    }

    /// What changed, for live views.
    pub fn changes(&self) -> &Changes {
        &self.changes
    }

    /// Sends the changes still to be sent, stops the changes listener and closes every connection (waits for the ones
    /// in use to be returned).
    pub async fn close(&self) {
        self.changes.stop().await;
        if let Some(writer) = &self.writer {
            writer.close().await;
        }
        self.lane.clear();
        self.pool.close().await;
    }
}

/// Creates the folder of a `sqlite://PATH` database, so a fresh `$CAIRN_HOME` just works.
/// `sqlite://PATH` made to create the file when it does not exist yet (`mode=rwc`), unless the URL sets a mode.
fn creating_sqlite_file(url: &str) -> String {
    match url.split_once('?') {
        Some((_, query)) if query.split('&').any(|p| p.starts_with("mode=")) => url.to_owned(),
        Some(_) => format!("{url}&mode=rwc"),
        None => format!("{url}?mode=rwc"),
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
    async fn a_plain_sqlite_url_creates_its_file() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("new").join("cairn.db");
        let store = Store::open(&format!("sqlite://{}", path.display())).await.unwrap();
        store.ping().await.unwrap();
        store.close().await;
        assert!(path.is_file(), "sqlite://PATH makes the file, as the docs say");
        assert_eq!(creating_sqlite_file("sqlite://a.db?mode=ro"), "sqlite://a.db?mode=ro", "an explicit mode stays");
        assert_eq!(creating_sqlite_file("sqlite://a.db?cache=shared"), "sqlite://a.db?cache=shared&mode=rwc");
    }

    #[tokio::test]
    async fn concurrent_migrations_apply_each_migration_exactly_once() {
        let fresh = testing::TestStore::unmigrated().await;
        let runs = (0..4).map(|_| {
            let url = fresh.url.clone();
            tokio::spawn(async move {
                let store = Store::connect(&url).await.unwrap();
                let applied = store.migrate().await.unwrap();
                store.close().await;
                applied
            })
        });
        let mut applied: Vec<i64> = Vec::new();
        for run in runs.collect::<Vec<_>>() {
            applied.extend(run.await.unwrap().into_iter().map(|m| m.version));
        }
        applied.sort_unstable();
        let known: Vec<i64> = Store::known_migrations().into_iter().map(|(version, _)| version).collect();
        assert_eq!(applied, known, "every migration applied once, by one of the four");
        assert!(fresh.store.migrate().await.unwrap().is_empty(), "nothing is left to do");
        fresh.store.ping().await.unwrap();
        let n: i64 = sqlx::query("SELECT COUNT(*) AS n FROM workflow_runs").fetch_one(fresh.store.pool()).await.unwrap().get("n");
        assert_eq!(n, 0);
    }

    #[tokio::test]
    async fn names_what_is_wrong_with_a_bad_url() {
        let err = Store::open("mysql://root:secret@db/cairn").await.unwrap_err();
        let text = err.to_string();
        assert!(text.contains("unsupported database URL"), "{text}");
        assert!(text.contains("root:***@db") && !text.contains("secret"), "{text}");
    }
}
