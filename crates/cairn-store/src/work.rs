//! The work surface's tables: typed queries for accounts, principals and tokens ([`accounts`]), decision spaces and
//! documents ([`decisions`]), work items and their event log ([`items`]), merged / rolled evidence ([`evidence`]) and
//! the web UI's sign-ins ([`signins`]).
//!
//! Every function takes the executor first (the pool for reads, a [`Store::begin_write`](crate::Store::begin_write)
//! transaction for changes) and returns plain rows; deciding what a change means is the work crate's job, not this
//! module's. Updates that race are compare-and-swaps on a row's `version`: they report whether they won, and the caller
//! retries from a fresh read; inserts that race meet a unique key ([`Error::is_unique_violation`]), and the loser rolls
//! back and retries. Neither relies on SQLite's single write lock, so both hold on Postgres at READ COMMITTED, where the
//! losing `UPDATE … WHERE version = $n` waits for the winner's commit and then matches no row.

pub mod accounts;
pub mod decisions;
pub mod evidence;
pub mod items;
pub mod signins;

use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use crate::Error;

/// Reads setting `name`, first storing `value` if it has none (the first process to ask decides).
pub async fn setting_or_init<'e, E>(db: E, name: &str, value: &str) -> Result<String, Error>
where
    E: Executor<'e, Database = Any> + Copy,
{
    sqlx::query("INSERT INTO work_settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING")
        .bind(name)
        .bind(value)
        .execute(db)
        .await?;
    let row = sqlx::query("SELECT value FROM work_settings WHERE name = $1").bind(name).fetch_one(db).await?;
    Ok(row.try_get("value")?)
}

/// An optional BIGINT column.
fn opt_i64(row: &AnyRow, column: &str) -> Result<Option<i64>, Error> {
    Ok(row.try_get::<Option<i64>, _>(column)?)
}
