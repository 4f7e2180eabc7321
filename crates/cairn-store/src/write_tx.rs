//! A write transaction: on SQLite it holds the process's writer connection (`writer.rs`) from `BEGIN
//! IMMEDIATE` to its end; on Postgres it is a transaction on a pooled connection, and writers run side by side.

use std::ops::{Deref, DerefMut};

use sqlx::any::AnyTransactionManager;
use sqlx::{Any, AnyConnection, Transaction};
use sqlx_core::transaction::TransactionManager;
use tokio::sync::OwnedMappedMutexGuard;

use crate::Error;

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

/// A transaction on the SQLite writer; the connection's transaction depth says whether it is still open.
#[derive(Debug)]
struct WriterTx {
    connection: OwnedMappedMutexGuard<Option<AnyConnection>, AnyConnection>,
}

impl Drop for WriterTx {
    fn drop(&mut self) {
        if AnyTransactionManager::get_transaction_depth(&self.connection) > 0 {
            AnyTransactionManager::start_rollback(&mut self.connection);
        }
    }
}

impl WriteTx {
    /// A transaction on a pooled connection.
    pub(crate) fn pooled(tx: Transaction<'static, Any>) -> WriteTx {
        WriteTx(Inner::Pooled(tx))
    }

    /// A transaction the caller has begun on the SQLite writer `connection`.
    pub(crate) fn on_writer(connection: OwnedMappedMutexGuard<Option<AnyConnection>, AnyConnection>) -> WriteTx {
        WriteTx(Inner::Writer(WriterTx { connection }))
    }

    /// Commits the transaction.
    pub async fn commit(self) -> Result<(), Error> {
        match self.0 {
            Inner::Pooled(tx) => tx.commit().await?,
            Inner::Writer(mut tx) => AnyTransactionManager::commit(&mut tx.connection).await?,
        }
        Ok(())
    }

    /// Rolls the transaction back.
    pub async fn rollback(self) -> Result<(), Error> {
        match self.0 {
            Inner::Pooled(tx) => tx.rollback().await?,
            Inner::Writer(mut tx) => AnyTransactionManager::rollback(&mut tx.connection).await?,
        }
        Ok(())
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
