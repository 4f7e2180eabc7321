//! Where SQLite and Postgres differ — with how a [`Batch`](crate::batch::Batch) travels and where SQLite writes go
//! (`writer.rs`), the only place in cairn where they do. Every query and migration elsewhere is
//! SQL both accept (`$n` placeholders, `ON CONFLICT`, `TEXT` / `BIGINT` / `DOUBLE PRECISION` columns, JSON as text,
//! `LIMIT $n`); what cannot be written once is a [`Backend`] method here:
//!
//! - **Connections.** SQLite runs [`Backend::connection_setup`] on each one (WAL, busy timeout, foreign keys); Postgres
//!   needs nothing. Pool sizes differ ([`Backend::max_connections`]).
//! - **Write transactions** ([`Store::begin_write`](crate::Store::begin_write)). SQLite: `BEGIN IMMEDIATE` on the
//!   process's one writer connection (`writer.rs`) takes the database's one write lock up front, so a transaction's
//!   reads are never stale. Postgres: `BEGIN` at READ COMMITTED, where writers run side by side; a read that decides
//!   a write locks its rows with [`Backend::lock_rows`] (`FOR UPDATE`), so a concurrent writer of the same row waits
//!   and then reads the committed result — what SQLite's write lock gives.
//!   The conditional updates (compare-and-swap on `version`, unique keys) stay the guarantee on both.
//! - **Migration lock** ([`Backend::migrate`]). Postgres: the session advisory lock sqlx's Postgres migrator uses
//!   (keyed by the database name), held from reading what is applied to the last migration. SQLite has no such lock,
//!   so the whole migration runs inside one `BEGIN IMMEDIATE` transaction (each migration a savepoint). Either way a
//!   second process waits, then finds nothing left to do.
//! - **Text order.** Postgres compares text by the database's collation, SQLite byte by byte; ids compare alike,
//!   and create the Postgres database with `LC_COLLATE 'C'` (or `C.UTF-8`) for names to sort exactly as on SQLite.

use std::borrow::Cow;
use std::collections::HashMap;

use sqlx::migrate::{Migrate, MigrateError, Migrator};
use sqlx::{AnyConnection, AnyPool, Executor};

use crate::{AppliedMigration, Error};

/// The table where sqlx's migrator records what it applied (its default name).
const MIGRATIONS_TABLE: &str = "_sqlx_migrations";

/// Which database server a [`Store`](crate::Store) talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The embedded SQLite file (`sqlite://…`).
    Sqlite,
    /// A PostgreSQL server (`postgres://…`), for several nodes sharing one database.
    Postgres,
}

/// Run on every new SQLite connection: a 10 s wait for another process's write lock (first, so that switching a new
/// file to WAL waits too), WAL so readers never block the writer, enforced foreign keys, and `synchronous = NORMAL`
/// (durable across a process kill under WAL).
const SQLITE_SETUP: &str = "PRAGMA busy_timeout = 10000; PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; \
                            PRAGMA synchronous = NORMAL;";

impl Backend {
    /// The backend a database URL names, if cairn supports it.
    pub fn from_url(url: &str) -> Option<Backend> {
        if url.starts_with("sqlite:") {
            Some(Backend::Sqlite)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Some(Backend::Postgres)
        } else {
            None
        }
    }

    /// The backend behind a connection.
    pub fn of(connection: &AnyConnection) -> Backend {
        match connection.backend_name() {
            "PostgreSQL" => Backend::Postgres,
            _ => Backend::Sqlite,
        }
    }

    /// Statements to run on every new connection.
    pub(crate) fn connection_setup(self) -> Option<&'static str> {
        match self {
            Backend::Sqlite => Some(SQLITE_SETUP),
            Backend::Postgres => None,
        }
    }

    /// Connections per process: SQLite writers queue on one lock anyway, Postgres serves several at once.
    pub(crate) fn max_connections(self) -> u32 {
        match self {
            Backend::Sqlite => 8,
            Backend::Postgres => 16,
        }
    }

    /// The clause that ends a `SELECT` whose rows a write transaction is about to change: ` FOR UPDATE` on Postgres,
    /// nothing on SQLite (whose write transaction already excludes every other writer).
    pub fn lock_rows(self) -> &'static str {
        match self {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR UPDATE",
        }
    }

    /// Applies `migrator`'s pending migrations under the backend's migration lock; returns the versions it applied
    /// (none when another process got there first).
    pub(crate) async fn migrate(self, pool: &AnyPool, migrator: &Migrator) -> Result<Vec<AppliedMigration>, Error> {
        match self {
            Backend::Sqlite => {
                let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
                let applied = migrate_on(&mut tx, migrator).await?;
                tx.commit().await?;
                Ok(applied)
            }
            Backend::Postgres => {
                let mut connection = pool.acquire().await?;
                connection.lock().await?;
                match migrate_on(&mut connection, migrator).await {
                    Ok(applied) => {
                        connection.unlock().await?;
                        Ok(applied)
                    }
                    Err(error) => {
                        // Closing the session releases its advisory lock whatever state it is in.
                        let _ = connection.close().await;
                        Err(error)
                    }
                }
            }
        }
    }
}

/// Applies `migrator`'s pending migrations on `connection` (already holding the migration lock), each in a
/// transaction of its own (a savepoint inside SQLite's lock), and reports them. Refuses a database that a failed
/// migration left dirty, one whose applied migration differs from this build's, and one migrated by a newer build.
async fn migrate_on(connection: &mut AnyConnection, migrator: &Migrator) -> Result<Vec<AppliedMigration>, Error> {
    connection.ensure_migrations_table(MIGRATIONS_TABLE).await?;
    if let Some(version) = connection.dirty_version(MIGRATIONS_TABLE).await? {
        return Err(MigrateError::Dirty(version).into());
    }
    let applied: HashMap<i64, Cow<'static, [u8]>> = connection
        .list_applied_migrations(MIGRATIONS_TABLE)
        .await?
        .into_iter()
        .map(|m| (m.version, m.checksum))
        .collect();
    if let Some(unknown) = applied.keys().find(|v| !migrator.iter().any(|m| m.version == **v)) {
        return Err(MigrateError::VersionMissing(*unknown).into());
    }
    let mut done = Vec::new();
    for migration in migrator.iter().filter(|m| !m.migration_type.is_down_migration()) {
        match applied.get(&migration.version) {
            Some(checksum) if *checksum != migration.checksum => {
                return Err(MigrateError::VersionMismatch(migration.version).into());
            }
            Some(_) => {}
            None => {
                connection.apply(MIGRATIONS_TABLE, migration).await?;
                done.push(AppliedMigration { version: migration.version, description: migration.description.to_string() });
            }
        }
    }
    Ok(done)
}

/// Runs the backend's per-connection setup on `connection`.
pub(crate) async fn set_up(backend: Backend, connection: &mut AnyConnection) -> Result<(), sqlx::Error> {
    if let Some(setup) = backend.connection_setup() {
        connection.execute(setup).await?;
    }
    Ok(())
}
