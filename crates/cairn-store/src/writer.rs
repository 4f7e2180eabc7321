//! The one connection a process writes SQLite through, and the queue that commits several callers' batches at once.
//!
//! SQLite has one write lock per database. When several connections of one process ask for it at once, all but
//! one get `SQLITE_BUSY` and sleep in SQLite's busy handler (1, 2, 5, 10 … ms) while the lock, held for a fraction of
//! a millisecond, sits free. So a process writes SQLite through one connection of its own, kept out of the pool
//! behind a fair async mutex: writers of one process wait in line, and only writers of other processes meet the busy
//! handler. One writer connection also keeps its page cache warm (a commit through another connection empties it)
//! and skips the pool's check-out and return.
//!
//! Two ways in:
//! - [`Writer::begin`]: a [`WriteTx`] that holds the connection from `BEGIN IMMEDIATE` to its commit or rollback,
//!   for changes that read inside their transaction (one hand-off to the connection's thread per statement).
//! - [`Writer::write`]: a [`Batch`] joins a queue. A committer task takes the batches waiting that are of one kind
//!   (the same statements, up to [`GROUP`]) and sends them as one query — `BEGIN IMMEDIATE`, each batch's
//!   statements, `COMMIT` — so one hand-off and one commit serve them all, and the query, repeating, stays
//!   prepared. Each batch's guards see only its own statements, so a compare-and-swap that loses changes nothing and
//!   the others still commit. If a statement breaks a constraint, the batches are run again one by one, so only the
//!   one at fault fails. Every caller hears back after the commit that carries its batch.
//!
//! All of this is a matter of speed: exactly-once still rests on `BEGIN IMMEDIATE` and the conditional updates,
//! which hold across processes.

use std::collections::VecDeque;
use std::sync::Arc;

use sqlx::any::{AnyConnectOptions, AnyTransactionManager};
use sqlx::error::ErrorKind;
use sqlx::{AnyConnection, ConnectOptions, Connection, SqlSafeStr};
use sqlx_core::transaction::TransactionManager;
use tokio::sync::{Mutex, OwnedMutexGuard, mpsc, oneshot};

use crate::batch::Batch;
use crate::dialect::{self, Backend};
use crate::write_tx::WriteTx;

/// At most this many batches commit together.
const GROUP: usize = 32;

/// The writer connection, shared by [`Writer::begin`] and the committer; `None` once closed.
type Shared = Arc<Mutex<Option<AnyConnection>>>;

/// A batch waiting for the committer, and where its result goes.
struct Job {
    batch: Batch,
    reply: oneshot::Sender<Result<Vec<u64>, sqlx::Error>>,
}

/// This process's SQLite writer (one per [`Store`](crate::Store), shared by its clones).
#[derive(Debug, Clone)]
pub(crate) struct Writer {
    connection: Shared,
    queue: mpsc::UnboundedSender<Job>,
}

impl Writer {
    /// Opens the writer connection, set up as every SQLite connection is, and starts its committer task.
    pub(crate) async fn connect(options: &AnyConnectOptions) -> Result<Writer, sqlx::Error> {
        let mut connection = options.connect().await?;
        dialect::set_up(Backend::Sqlite, &mut connection).await?;
        let connection = Arc::new(Mutex::new(Some(connection)));
        let (queue, jobs) = mpsc::unbounded_channel();
        tokio::spawn(commit_queued(connection.clone(), jobs));
        Ok(Writer { connection, queue })
    }

    /// Waits for this process's turn to write, then starts an immediate transaction on the writer.
    pub(crate) async fn begin(&self) -> Result<WriteTx, sqlx::Error> {
        let guard = self.connection.clone().lock_owned().await;
        let mut connection = OwnedMutexGuard::try_map(guard, Option::as_mut).map_err(|_| sqlx::Error::PoolClosed)?;
        AnyTransactionManager::begin(&mut connection, Some("BEGIN IMMEDIATE".into_sql_str())).await?;
        Ok(WriteTx::on_writer(connection))
    }

    /// Commits `batch` (with whatever else is waiting) and returns how many rows each of its statements changed.
    pub(crate) async fn write(&self, batch: Batch) -> Result<Vec<u64>, sqlx::Error> {
        let (reply, result) = oneshot::channel();
        self.queue.send(Job { batch, reply }).map_err(|_| sqlx::Error::PoolClosed)?;
        result.await.map_err(|_| sqlx::Error::PoolClosed)?
    }

    /// Closes the writer connection once the transaction in progress (if any) is over; later writes fail.
    pub(crate) async fn close(&self) {
        if let Some(connection) = self.connection.lock().await.take() {
            let _ = connection.close().await;
        }
    }
}

/// The committer: for as long as a [`Writer`] is left, takes the batches waiting and commits those of the first
/// one's kind together.
async fn commit_queued(connection: Shared, mut queue: mpsc::UnboundedReceiver<Job>) {
    let mut waiting: VecDeque<Job> = VecDeque::new();
    loop {
        if waiting.is_empty() {
            match queue.recv().await {
                Some(job) => waiting.push_back(job),
                None => return,
            }
        }
        let mut guard = connection.lock().await;
        // Whatever queued while the connection was busy goes along.
        while let Ok(job) = queue.try_recv() {
            waiting.push_back(job);
        }
        let jobs = take_group(&mut waiting);
        let Some(connection) = guard.as_mut() else {
            jobs.into_iter().for_each(|job| drop(job.reply.send(Err(sqlx::Error::PoolClosed))));
            continue;
        };
        commit_group(connection, jobs).await;
    }
}

/// The first job waiting and, in their order, the others of its kind ([`Batch::same_statements`]), up to [`GROUP`]:
/// one kind at a time keeps the combined queries few, so SQLite keeps each one prepared.
fn take_group(waiting: &mut VecDeque<Job>) -> Vec<Job> {
    let first = waiting.pop_front().expect("a job is waiting");
    let mut group = vec![first];
    let mut others = VecDeque::new();
    while let Some(job) = waiting.pop_front() {
        if group.len() < GROUP && job.batch.same_statements(&group[0].batch) {
            group.push(job);
        } else {
            others.push_back(job);
        }
    }
    *waiting = others;
    group
}

/// Commits `jobs` in one query and tells each its outcome; if a statement breaks a constraint, commits them one by
/// one so that only the batch at fault fails.
async fn commit_group(connection: &mut AnyConnection, jobs: Vec<Job>) {
    if jobs.len() > 1 {
        let together = Batch::concat(jobs.iter().map(|job| &job.batch));
        match together.write_sqlite(connection).await {
            Ok(changed) => {
                let mut changed = changed.into_iter();
                for job in jobs {
                    let _ = job.reply.send(Ok(changed.by_ref().take(job.batch.len()).collect()));
                }
                return;
            }
            Err(error) if !is_statement_fault(&error) => {
                // Not one batch's fault (the lock stayed busy, the disk failed): all of them hear it.
                let message = error.to_string();
                let mut jobs = jobs.into_iter();
                let first = jobs.next().expect("more than one job");
                let _ = first.reply.send(Err(error));
                jobs.for_each(|job| drop(job.reply.send(Err(sqlx::Error::Protocol(message.clone())))));
                return;
            }
            Err(_) => {}
        }
    }
    for job in jobs {
        let _ = job.reply.send(job.batch.write_sqlite(connection).await);
    }
}

/// Whether `error` is a statement breaking a constraint (a unique key, a foreign key, NOT NULL, CHECK).
fn is_statement_fault(error: &sqlx::Error) -> bool {
    error.as_database_error().is_some_and(|e| !matches!(e.kind(), ErrorKind::Other))
}

#[cfg(test)]
mod tests {
    use sqlx::Row;

    use crate::batch::Batch;
    use crate::testing::TestStore;

    /// `slot` moves from `from` to `from + 1`, and a log row `key` is written only if it did.
    fn swap(from: i64, key: &str) -> Batch {
        let mut batch = Batch::new();
        batch.push("UPDATE writer_slot SET n = $1 WHERE n = $2", vec![(from + 1).into(), from.into()]);
        batch.push_if_changed("INSERT INTO writer_log (k) SELECT $1", vec![key.into()]);
        batch
    }

    #[tokio::test]
    async fn batches_written_at_once_commit_together_each_with_its_own_outcome() {
        let test = TestStore::new().await;
        for sql in ["CREATE TABLE writer_slot (n BIGINT NOT NULL)", "CREATE TABLE writer_log (k TEXT PRIMARY KEY)"] {
            sqlx::query(sql).execute(test.store.pool()).await.unwrap();
        }
        sqlx::query("INSERT INTO writer_slot (n) VALUES (0)").execute(test.store.pool()).await.unwrap();
        // 40 compare-and-swaps of one slot from 0, and 10 log rows of which one repeats a key already taken.
        let mut writes = Vec::new();
        for i in 0..40 {
            let store = test.store.clone();
            writes.push(tokio::spawn(async move { store.write(swap(0, &format!("swap {i}"))).await }));
        }
        for i in 0..10 {
            let store = test.store.clone();
            let key = if i == 9 { "plain 0".to_owned() } else { format!("plain {i}") };
            writes.push(tokio::spawn(async move {
                if i == 9 {
                    tokio::task::yield_now().await;
                }
                let mut batch = Batch::new();
                batch.push("INSERT INTO writer_log (k) VALUES ($1)", vec![key.as_str().into()]);
                store.write(batch).await
            }));
        }
        let mut won = 0;
        let mut lost = 0;
        let mut failed = 0;
        for write in writes {
            match write.await.unwrap() {
                Ok(changed) if changed == [1, 1] || changed == [1] => won += 1,
                Ok(changed) => {
                    assert_eq!(changed, [0, 0], "a lost swap writes nothing");
                    lost += 1;
                }
                Err(_) => failed += 1,
            }
        }
        assert_eq!((won, lost, failed), (10, 39, 1), "one swap and nine plain rows win; the repeated key alone fails");
        let n: i64 = sqlx::query("SELECT n FROM writer_slot").fetch_one(test.store.pool()).await.unwrap().get("n");
        assert_eq!(n, 1);
        let logged: i64 =
            sqlx::query("SELECT COUNT(*) AS c FROM writer_log").fetch_one(test.store.pool()).await.unwrap().get("c");
        assert_eq!(logged, 10, "nine plain rows and the one winning swap's row");
    }

    #[tokio::test]
    async fn a_closed_store_refuses_writes() {
        let test = TestStore::new().await;
        test.store.close().await;
        let mut batch = Batch::new();
        batch.push("CREATE TABLE writer_closed (n BIGINT)", Vec::new());
        let refused = test.store.write(batch).await;
        assert!(matches!(refused, Err(crate::Error::Query(sqlx::Error::PoolClosed))), "{refused:?}");
    }
}
