//! The changes feed: which run trees and work items changed, for live views (the web UI's SSE streams) that would
//! otherwise poll the database.
//!
//! A write transaction that appends run or work-item events also announces the change. On Postgres the announcement
//! is a `pg_notify` on the `cairn_changes` channel inside that transaction, so the server delivers it to every node
//! exactly when the transaction commits; one listener per process (started by the first subscriber, reconnecting)
//! fans the notifications out through a tokio broadcast channel. On SQLite there is no server to tell other
//! processes: the writer calls [`Changes::committed`] after its commit to wake this process's subscribers, and
//! subscribers also re-read every [`Changes::fallback_poll`] to see other processes' writes.
//!
//! A [`Change`] only says where to look; subscribers re-read the database, so a duplicate or spurious change costs a
//! query and never shows anything wrong. [`Change::Unknown`] means changes may have been missed (the listener
//! (re)connected, or a subscriber fell behind): re-read everything watched.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::AnyConnection;
use sqlx::postgres::PgListener;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use crate::Backend;

/// The Postgres notification channel.
const CHANNEL: &str = "cairn_changes";
/// How many changes a slow subscriber may fall behind before it is told [`Change::Unknown`].
const CAPACITY: usize = 1024;
/// How long the listener waits before connecting again after a failure.
const RECONNECT: Duration = Duration::from_secs(1);

/// Something that changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The event log of a run tree grew; the id of the tree's root run.
    Run(String),
    /// The event log of a work item grew; the item's id.
    Item(String),
    /// Changes may have been missed: re-read everything watched.
    Unknown,
}

impl Change {
    /// The notification payload: `run:<id>` or `item:<id>` (`Unknown` is never sent).
    fn payload(&self) -> Option<String> {
        match self {
            Change::Run(id) => Some(format!("run:{id}")),
            Change::Item(id) => Some(format!("item:{id}")),
            Change::Unknown => None,
        }
    }

    /// Reads a notification payload; anything unexpected is [`Change::Unknown`].
    fn parse(payload: &str) -> Change {
        match payload.split_once(':') {
            Some(("run", id)) => Change::Run(id.to_owned()),
            Some(("item", id)) => Change::Item(id.to_owned()),
            _ => Change::Unknown,
        }
    }
}

/// This process's view of the changes feed of one database. Cheap to clone.
#[derive(Clone)]
pub struct Changes {
    inner: Arc<Inner>,
}

struct Inner {
    backend: Backend,
    /// The Postgres URL the listener connects to (`None` on SQLite).
    listen_url: Option<String>,
    sender: broadcast::Sender<Change>,
    /// The Postgres listener task, once a subscriber started it.
    listener: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes").field("backend", &self.inner.backend).finish_non_exhaustive()
    }
}

impl Changes {
    /// The feed of the database at `url`, served by `backend`.
    pub(crate) fn new(backend: Backend, url: &str) -> Changes {
        let (sender, _) = broadcast::channel(CAPACITY);
        let listen_url = (backend == Backend::Postgres).then(|| url.to_owned());
        Changes { inner: Arc::new(Inner { backend, listen_url, sender, listener: Mutex::new(None) }) }
    }

    /// A receiver of every change from now on. On Postgres the first call starts this process's listener (inside
    /// the current tokio runtime); it sends [`Change::Unknown`] each time it starts listening, so nothing committed
    /// before then goes unseen.
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        let receiver = self.inner.sender.subscribe();
        if let Some(url) = &self.inner.listen_url {
            let mut listener = self.inner.listener.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if listener.is_none() {
                *listener = Some(tokio::spawn(listen(url.clone(), self.inner.sender.clone())));
            }
        }
        receiver
    }

    /// After the commit of a write that announced `change`: wakes this process's subscribers. Only SQLite needs
    /// this; on Postgres the listener hears the transaction's own notification, so this does nothing.
    pub fn committed(&self, change: Change) {
        if self.inner.backend == Backend::Sqlite {
            let _ = self.inner.sender.send(change);
        }
    }

    /// How often a subscriber should re-read anyway: often on SQLite (other processes' writes are only seen this
    /// way), rarely on Postgres (only a notification lost with a dropped listener connection needs it).
    pub fn fallback_poll(&self) -> Duration {
        match self.inner.backend {
            Backend::Sqlite => Duration::from_secs(1),
            Backend::Postgres => Duration::from_secs(5),
        }
    }

    /// Stops the listener (the database is closing).
    pub(crate) fn stop(&self) {
        let listener = self.inner.listener.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        if let Some(task) = listener {
            task.abort();
        }
    }
}

/// Inside the write transaction `conn` that appended events of run `run_id`: on Postgres, notifies every node of
/// its tree (by the root's id) when the transaction commits. Nothing on SQLite.
pub(crate) async fn announce_run(conn: &mut AnyConnection, run_id: &str) -> Result<(), sqlx::Error> {
    if Backend::of(conn) != Backend::Postgres {
        return Ok(());
    }
    // `::text`: the driver cannot read pg_notify's `void` result.
    sqlx::query("SELECT pg_notify($1, 'run:' || root_run_id)::text FROM workflow_runs WHERE id = $2")
        .bind(CHANNEL)
        .bind(run_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Inside a write transaction `conn` that changes what `change` names: on Postgres, notifies every node when the
/// transaction commits. Nothing on SQLite.
pub(crate) async fn announce(conn: &mut AnyConnection, change: &Change) -> Result<(), sqlx::Error> {
    let Some((channel, payload)) = notification(change) else { return Ok(()) };
    if Backend::of(conn) != Backend::Postgres {
        return Ok(());
    }
    sqlx::query("SELECT pg_notify($1, $2)::text").bind(channel).bind(payload).execute(conn).await?;
    Ok(())
}

/// The channel and payload of the Postgres notification that announces `change` (`None` for [`Change::Unknown`]),
/// for a statement that sends it itself (`pg_notify(channel, payload)`).
pub(crate) fn notification(change: &Change) -> Option<(&'static str, String)> {
    change.payload().map(|payload| (CHANNEL, payload))
}

/// The Postgres listener: LISTEN on [`CHANNEL`] and forward each notification to `sender`, reconnecting forever.
async fn listen(url: String, sender: broadcast::Sender<Change>) {
    loop {
        match PgListener::connect(&url).await {
            Ok(mut listener) => match listener.listen(CHANNEL).await {
                Ok(()) => {
                    let _ = sender.send(Change::Unknown);
                    loop {
                        match listener.try_recv().await {
                            Ok(Some(notification)) => {
                                let _ = sender.send(Change::parse(notification.payload()));
                            }
                            // The connection dropped and was re-established (LISTEN included): notifications sent
                            // in between are lost.
                            Ok(None) => {
                                let _ = sender.send(Change::Unknown);
                            }
                            Err(error) => {
                                tracing::warn!("the changes listener lost the database: {error}");
                                break;
                            }
                        }
                    }
                }
                Err(error) => tracing::warn!("the changes listener cannot LISTEN: {error}"),
            },
            Err(error) => tracing::warn!("the changes listener cannot connect: {error}"),
        }
        tokio::time::sleep(RECONNECT).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use crate::testing::TestStore;

    #[test]
    fn payloads_round_trip_and_anything_else_is_unknown() {
        for change in [Change::Run("r1".into()), Change::Item("i1".into())] {
            assert_eq!(Change::parse(&change.payload().unwrap()), change);
        }
        assert_eq!(Change::Unknown.payload(), None);
        assert_eq!(Change::parse("board"), Change::Unknown);
        assert_eq!(Change::parse("space:s1"), Change::Unknown);
    }

    #[tokio::test]
    async fn on_sqlite_a_commit_wakes_this_process_and_announcing_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&Store::default_url(dir.path())).await.unwrap();
        let mut receiver = store.changes().subscribe();
        let mut tx = store.begin_write().await.unwrap();
        announce(&mut tx, &Change::Item("i1".into())).await.unwrap();
        announce_run(&mut tx, "r1").await.unwrap();
        tx.commit().await.unwrap();
        store.changes().committed(Change::Run("r1".into()));
        assert_eq!(receiver.recv().await.unwrap(), Change::Run("r1".into()));
        assert!(receiver.try_recv().is_err(), "announcing inside the transaction sent nothing on SQLite");
    }

    #[tokio::test]
    async fn on_postgres_a_committed_announcement_reaches_the_listener_and_a_rolled_back_one_does_not() {
        let test = TestStore::new().await;
        let store = &test.store;
        if store.backend() != Backend::Postgres {
            return;
        }
        let mut receiver = store.changes().subscribe();
        assert_eq!(receiver.recv().await.unwrap(), Change::Unknown, "the listener says when it starts listening");

        let mut tx = store.begin_write().await.unwrap();
        announce(&mut tx, &Change::Item("lost".into())).await.unwrap();
        tx.rollback().await.unwrap();
        let mut tx = store.begin_write().await.unwrap();
        announce(&mut tx, &Change::Item("i1".into())).await.unwrap();
        announce(&mut tx, &Change::Item("i1".into())).await.unwrap();
        tx.commit().await.unwrap();
        store.changes().committed(Change::Item("i1".into()));
        assert_eq!(receiver.recv().await.unwrap(), Change::Item("i1".into()), "only the committed one, once");

        let mut tx = store.begin_write().await.unwrap();
        announce(&mut tx, &Change::Run("r2".into())).await.unwrap();
        tx.commit().await.unwrap();
        assert_eq!(receiver.recv().await.unwrap(), Change::Run("r2".into()));
        store.close().await;
    }
}
