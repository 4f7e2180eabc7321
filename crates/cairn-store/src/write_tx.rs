//! A write transaction, and the queue that lines up one process's SQLite writers before they ask for the lock.
//!
//! SQLite has one write lock per database. When several connections of one process ask for it at once, all but
//! one get `SQLITE_BUSY` and sleep in SQLite's busy handler (1, 2, 5, 10 … ms) while the lock, held for a fraction of
//! a millisecond, sits free — so concurrent writers of one process are much slower than the same writers in a row.
//! [`WriteTx`] therefore holds this process's turn ([`Writers`], a fair async mutex) for as long as its SQLite
//! transaction is open: writers of one process wait in line, and only writers of other processes meet the busy
//! handler. The turn is a matter of speed only — exactly-once still rests on `BEGIN IMMEDIATE` and the conditional
//! updates, which hold across processes. Postgres writers run side by side and take no turn.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use sqlx::{Any, AnyConnection, Transaction};
use tokio::sync::{Mutex, OwnedMutexGuard};

/// This process's line of SQLite writers (one per [`Store`](crate::Store), shared by its clones).
#[derive(Debug, Clone, Default)]
pub(crate) struct Writers(Arc<Mutex<()>>);

impl Writers {
    /// Waits for this process's turn to write.
    pub(crate) async fn turn(&self) -> OwnedMutexGuard<()> {
        self.0.clone().lock_owned().await
    }
}

/// An open write transaction: use `&mut *tx` as the connection for queries, then [`WriteTx::commit`]. Dropped
/// without a commit, it rolls back.
#[derive(Debug)]
pub struct WriteTx {
    // Declared first so it drops (and queues its rollback) before the turn is handed on.
    tx: Transaction<'static, Any>,
    _turn: Option<OwnedMutexGuard<()>>,
}

impl WriteTx {
    pub(crate) fn new(tx: Transaction<'static, Any>, turn: Option<OwnedMutexGuard<()>>) -> WriteTx {
        WriteTx { tx, _turn: turn }
    }

    /// Commits the transaction.
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        self.tx.commit().await
    }

    /// Rolls the transaction back.
    pub async fn rollback(self) -> Result<(), sqlx::Error> {
        self.tx.rollback().await
    }
}

impl Deref for WriteTx {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        &self.tx
    }
}

impl DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.tx
    }
}
