//! A write transaction, and the one connection a process writes SQLite through.
//!
//! SQLite has one write lock per database. When several connections of one process ask for it at once, all but
//! one get `SQLITE_BUSY` and sleep in SQLite's busy handler (1, 2, 5, 10 … ms) while the lock, held for a fraction of
//! a millisecond, sits free. So a process writes SQLite through one connection of its own, [`Writer`], kept out of
//! the pool: a [`WriteTx`] holds it (a fair async mutex) for as long as its transaction is open, so writers of one
//! process wait in line and only writers of other processes meet the busy handler. One writer connection also keeps
//! its page cache warm (a commit through another connection empties it) and skips the pool's check-out and return.
//! All of this is a matter of speed — exactly-once still rests on `BEGIN IMMEDIATE` and the conditional updates,
//! which hold across processes. Postgres writers run side by side, each on a pooled connection.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use sqlx::any::{AnyConnectOptions, AnyTransactionManager};
use sqlx::{Any, AnyConnection, ConnectOptions, Connection, SqlSafeStr, Transaction};
use sqlx_core::transaction::TransactionManager;
use tokio::sync::{Mutex, OwnedMappedMutexGuard, OwnedMutexGuard};

use crate::batch::Batch;
use crate::dialect::{self, Backend};

/// This process's SQLite writer connection (one per [`Store`](crate::Store), shared by its clones; `None` once
/// closed).
#[derive(Debug, Clone)]
pub(crate) struct Writer(Arc<Mutex<Option<AnyConnection>>>);

impl Writer {
    /// Opens the writer connection, set up as every SQLite connection is.
    pub(crate) async fn connect(options: &AnyConnectOptions) -> Result<Writer, sqlx::Error> {
        let mut connection = options.connect().await?;
        dialect::set_up(Backend::Sqlite, &mut connection).await?;
        Ok(Writer(Arc::new(Mutex::new(Some(connection)))))
    }

    /// Waits for this process's turn to write, then starts an immediate transaction on the writer.
    pub(crate) async fn begin(&self) -> Result<WriteTx, sqlx::Error> {
        let guard = self.0.clone().lock_owned().await;
        let mut connection = OwnedMutexGuard::try_map(guard, Option::as_mut).map_err(|_| sqlx::Error::PoolClosed)?;
        AnyTransactionManager::begin(&mut connection, Some("BEGIN IMMEDIATE".into_sql_str())).await?;
        Ok(WriteTx(Inner::Writer(WriterTx { connection, open: true })))
    }

    /// Runs `batch` as a transaction of its own on the writer: one query, one hand-off to the connection's thread
    /// ([`Batch`]). It runs in a task of its own, so a caller that stops waiting cannot cut it off half-sent.
    pub(crate) async fn write(&self, batch: Batch) -> Result<Vec<u64>, sqlx::Error> {
        let writer = self.0.clone();
        let task = tokio::spawn(async move {
            let mut connection = writer.lock_owned().await;
            let connection = connection.as_mut().ok_or(sqlx::Error::PoolClosed)?;
            batch.write_sqlite(connection).await
        });
        task.await.map_err(|error| sqlx::Error::Protocol(format!("the write task failed: {error}")))?
    }

    /// Closes the writer connection once the transaction in progress (if any) is over; later writes fail.
    pub(crate) async fn close(&self) {
        if let Some(connection) = self.0.lock().await.take() {
            let _ = connection.close().await;
        }
    }
}

/// An open write transaction: use `&mut *tx` as the connection for queries, then [`WriteTx::commit`]. Dropped
/// without a commit, it rolls back (queued on its connection, ahead of whatever the connection does next).
#[derive(Debug)]
pub struct WriteTx(Inner);

#[derive(Debug)]
enum Inner {
    /// Postgres: a transaction on a pooled connection.
    Pooled(Transaction<'static, Any>),
    /// SQLite: the process's writer, held until the transaction ends.
    Writer(WriterTx),
}

/// A transaction on the SQLite writer.
#[derive(Debug)]
struct WriterTx {
    connection: OwnedMappedMutexGuard<Option<AnyConnection>, AnyConnection>,
    open: bool,
}

impl Drop for WriterTx {
    fn drop(&mut self) {
        if self.open {
            AnyTransactionManager::start_rollback(&mut self.connection);
        }
    }
}

impl WriteTx {
    /// A transaction on a pooled connection.
    pub(crate) fn pooled(tx: Transaction<'static, Any>) -> WriteTx {
        WriteTx(Inner::Pooled(tx))
    }

    /// Commits the transaction.
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        match self.0 {
            Inner::Pooled(tx) => tx.commit().await,
            Inner::Writer(mut tx) => {
                AnyTransactionManager::commit(&mut tx.connection).await?;
                tx.open = false;
                Ok(())
            }
        }
    }

    /// Rolls the transaction back.
    pub async fn rollback(self) -> Result<(), sqlx::Error> {
        match self.0 {
            Inner::Pooled(tx) => tx.rollback().await,
            Inner::Writer(mut tx) => {
                AnyTransactionManager::rollback(&mut tx.connection).await?;
                tx.open = false;
                Ok(())
            }
        }
    }
}

impl Deref for WriteTx {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        match &self.0 {
            Inner::Pooled(tx) => tx,
            Inner::Writer(tx) => &tx.connection,
        }
    }
}

impl DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match &mut self.0 {
            Inner::Pooled(tx) => tx,
            Inner::Writer(tx) => &mut tx.connection,
        }
    }
}
