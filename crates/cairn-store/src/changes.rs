//! The changes feed: which run trees, work items and tokens changed, for live views (the web UI's SSE streams) that
//! would otherwise poll the database, and for caches that must forget what changed.
//!
//! A write that changes something announced calls [`Changes::committed`] after its commit. On SQLite there is no
//! server to tell other processes: that wakes this process's subscribers, and subscribers also re-read every
//! [`Changes::fallback_poll`] to see other processes' writes. On Postgres the change is sent to every node as a
//! `pg_notify` on the `cairn_changes` channel, soon after the commit ([`outbox`]); one listener per process (started
//! by the first subscriber, reconnecting) fans the notifications out through a tokio broadcast channel, this
//! process's own included. A revoked token is announced inside the revoking transaction instead ([`announce`]), so
//! no node can miss it: caches of tokens ([`Changes::listening`]) rest on that.
//!
//! A [`Change`] only says where to look; subscribers re-read the database, so a duplicate or spurious change costs a
//! query and never shows anything wrong. [`Change::Unknown`] means changes may have been missed (the listener
//! (re)connected, or a subscriber fell behind): re-read everything watched, forget everything cached.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::{AnyConnection, AnyPool};
use sqlx::postgres::PgListener;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use crate::Backend;

mod outbox;

use outbox::Outbox;

/// The Postgres notification channel.
const CHANNEL: &str = "cairn_changes";
/// The statement that sends a notification: `$1` the channel, `$2` the payload. (`::text`: the driver cannot read
/// pg_notify's `void` result.)
const NOTIFY: &str = "SELECT pg_notify($1, $2)::text";
/// How many changes a slow subscriber may fall behind before it is told [`Change::Unknown`].
const CAPACITY: usize = 1024;
/// How long the listener waits before connecting again after a failure.
const RECONNECT: Duration = Duration::from_secs(1);

/// Something that changed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Change {
    /// The event log of a run tree grew; the id of the tree's root run.
    Run(String),
    /// The event log of a work item grew; the item's id.
    Item(String),
    /// A token was revoked; its id.
    Token(String),
    /// Changes may have been missed: re-read everything watched.
    Unknown,
}

impl Change {
    /// The line that stands for it in a notification: `run:<id>`, `item:<id>` or `token:<id>` (`Unknown` is never
    /// sent).
    fn line(&self) -> Option<String> {
        match self {
            Change::Run(id) => Some(format!("run:{id}")),
            Change::Item(id) => Some(format!("item:{id}")),
            Change::Token(id) => Some(format!("token:{id}")),
            Change::Unknown => None,
        }
    }

    /// Reads a line of a notification; anything unexpected is [`Change::Unknown`].
    fn parse(line: &str) -> Change {
        match line.split_once(':') {
            Some(("run", id)) => Change::Run(id.to_owned()),
            Some(("item", id)) => Change::Item(id.to_owned()),
            Some(("token", id)) => Change::Token(id.to_owned()),
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
    /// The listener's connection: 0 while it has none, else a number that grows with each connection it listens on.
    listening: Arc<AtomicU64>,
    /// What sends this process's changes to every node (`None` on SQLite).
    outbox: Option<Outbox>,
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes").field("backend", &self.inner.backend).finish_non_exhaustive()
    }
}

impl Changes {
    /// The feed of the database at `url`, served by `backend`; on Postgres the changes are sent through `pool`.
    pub(crate) fn new(backend: Backend, url: &str, pool: &AnyPool) -> Changes {
        let (sender, _) = broadcast::channel(CAPACITY);
        let postgres = backend == Backend::Postgres;
        let listen_url = postgres.then(|| url.to_owned());
        let outbox = postgres.then(|| Outbox::new(pool.clone()));
        let listening = Arc::new(AtomicU64::new(0));
        Changes { inner: Arc::new(Inner { backend, listen_url, sender, listener: Mutex::new(None), listening, outbox }) }
    }

    /// A receiver of every change from now on. On Postgres the first call starts this process's listener (inside
    /// the current tokio runtime); it sends [`Change::Unknown`] each time it starts listening, so nothing committed
    /// before then goes unseen.
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        let receiver = self.inner.sender.subscribe();
        if let Some(url) = &self.inner.listen_url {
            let mut listener = self.inner.listener.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if listener.is_none() {
                let listening = self.inner.listening.clone();
                *listener = Some(tokio::spawn(listen(url.clone(), self.inner.sender.clone(), listening)));
            }
        }
        receiver
    }

    /// After the commit of a write that changed what `change` names: tells the subscribers. On SQLite it wakes this
    /// process's subscribers at once; on Postgres it sends the change to every node's listener (this one's too),
    /// soon after, from a task of the current tokio runtime ([`outbox`]).
    pub fn committed(&self, change: Change) {
        match &self.inner.outbox {
            None => {
                let _ = self.inner.sender.send(change);
            }
            Some(outbox) => {
                if let Some(line) = change.line() {
                    outbox.post(line);
                }
            }
        }
    }

    /// After the commit of a transaction that announced `change` itself ([`announce`]): wakes this process's
    /// subscribers on SQLite. On Postgres the listeners hear the transaction's own notification, so this does nothing.
    pub(crate) fn announced(&self, change: Change) {
        if self.inner.outbox.is_none() {
            let _ = self.inner.sender.send(change);
        }
    }

    /// On Postgres while the listener is connected: which connection it listens on (the number changes when it
    /// reconnects, and notifications may have been lost in between). `None` while it is not (or on SQLite, where
    /// other processes' changes are not heard at all). A cache of what the feed announces is sound only while this
    /// stays the same, and after it has received every change made since the number was first read.
    pub fn listening(&self) -> Option<u64> {
        Some(self.inner.listening.load(Ordering::Acquire)).filter(|&connection| connection != 0)
    }

    /// How often a subscriber should re-read anyway: often on SQLite (other processes' writes are only seen this
    /// way), rarely on Postgres (only a notification lost with a dropped listener connection, or with a process that
    /// died between a commit and its notification, needs it).
    pub fn fallback_poll(&self) -> Duration {
        match self.inner.backend {
            Backend::Sqlite => Duration::from_secs(1),
            Backend::Postgres => Duration::from_secs(5),
        }
    }

    /// Stops the listener and sends what is still to be sent (the database is closing).
    pub(crate) async fn stop(&self) {
        let listener = self.inner.listener.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        if let Some(task) = listener {
            task.abort();
            self.inner.listening.store(0, Ordering::Release);
        }
        if let Some(outbox) = &self.inner.outbox {
            outbox.flush().await;
        }
    }
}

/// Inside a write transaction `conn` that makes `change`: on Postgres, notifies every node when (and only if) the
/// transaction commits. For changes no node may miss (a revoked token), where the serialized commit costs nothing
/// that matters; call [`Changes::announced`] after the commit (SQLite's subscribers). Nothing on SQLite.
pub(crate) async fn announce(conn: &mut AnyConnection, change: &Change) -> Result<(), sqlx::Error> {
    let Some(line) = change.line() else { return Ok(()) };
    if Backend::of(conn) != Backend::Postgres {
        return Ok(());
    }
    sqlx::query(NOTIFY).bind(CHANNEL).bind(line).execute(conn).await?;
    Ok(())
}

/// The Postgres listener: LISTEN on [`CHANNEL`] and forward each change of each notification to `sender`,
/// reconnecting forever; `listening` numbers its connections (0 while it has none).
async fn listen(url: String, sender: broadcast::Sender<Change>, listening: Arc<AtomicU64>) {
    let mut connection = 0;
    loop {
        match PgListener::connect(&url).await {
            Ok(mut listener) => match listener.listen(CHANNEL).await {
                Ok(()) => {
                    connection += 1;
                    listening.store(connection, Ordering::Release);
                    let _ = sender.send(Change::Unknown);
                    loop {
                        match listener.try_recv().await {
                            Ok(Some(notification)) => {
                                for line in notification.payload().lines() {
                                    let _ = sender.send(Change::parse(line));
                                }
                            }
                            // The connection dropped and was re-established (LISTEN included): notifications sent
                            // in between are lost.
                            Ok(None) => {
                                connection += 1;
                                listening.store(connection, Ordering::Release);
                                let _ = sender.send(Change::Unknown);
                            }
                            Err(error) => {
                                listening.store(0, Ordering::Release);
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
    fn lines_round_trip_and_anything_else_is_unknown() {
        for change in [Change::Run("r1".into()), Change::Item("i1".into()), Change::Token("tok_1".into())] {
            assert_eq!(Change::parse(&change.line().unwrap()), change);
        }
        assert_eq!(Change::Unknown.line(), None);
        assert_eq!(Change::parse("board"), Change::Unknown);
        assert_eq!(Change::parse("space:s1"), Change::Unknown);
    }

    #[tokio::test]
    async fn on_sqlite_a_commit_wakes_this_process_at_once_and_an_announcement_only_after_its_commit() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&Store::default_url(dir.path())).await.unwrap();
        let mut receiver = store.changes().subscribe();
        store.changes().committed(Change::Run("r1".into()));
        assert_eq!(receiver.try_recv().unwrap(), Change::Run("r1".into()));
        let mut tx = store.begin_write().await.unwrap();
        announce(&mut tx, &Change::Token("t1".into())).await.unwrap();
        tx.commit().await.unwrap();
        assert!(receiver.try_recv().is_err(), "announcing inside the transaction sends nothing on SQLite");
        store.changes().announced(Change::Token("t1".into()));
        assert_eq!(receiver.try_recv().unwrap(), Change::Token("t1".into()));
        store.close().await;
    }

    /// A store on Postgres (`None` on SQLite) and a receiver of its changes feed, once its listener listens.
    async fn listening_on_postgres() -> Option<(TestStore, broadcast::Receiver<Change>)> {
        let test = TestStore::new().await;
        if test.store.backend() != Backend::Postgres {
            return None;
        }
        let mut receiver = test.store.changes().subscribe();
        assert_eq!(receiver.recv().await.unwrap(), Change::Unknown, "the listener says when it starts listening");
        Some((test, receiver))
    }

    #[tokio::test]
    async fn on_postgres_an_announcement_is_heard_once_when_its_transaction_commits_and_never_if_it_rolls_back() {
        let Some((test, mut receiver)) = listening_on_postgres().await else { return };
        let store = &test.store;
        let mut tx = store.begin_write().await.unwrap();
        announce(&mut tx, &Change::Token("lost".into())).await.unwrap();
        tx.rollback().await.unwrap();
        let mut tx = store.begin_write().await.unwrap();
        announce(&mut tx, &Change::Token("t1".into())).await.unwrap();
        tx.commit().await.unwrap();
        store.changes().announced(Change::Token("t1".into()));
        store.changes().committed(Change::Run("after".into()));
        assert_eq!(receiver.recv().await.unwrap(), Change::Token("t1".into()), "the committed one only");
        assert_eq!(receiver.recv().await.unwrap(), Change::Run("after".into()), "and once");
        store.close().await;
    }

    #[tokio::test]
    async fn on_postgres_every_committed_change_reaches_the_listener_however_many_come_at_once() {
        let Some((test, mut receiver)) = listening_on_postgres().await else { return };
        let store = &test.store;

        store.changes().committed(Change::Item("i1".into()));
        assert_eq!(receiver.recv().await.unwrap(), Change::Item("i1".into()));
        // A burst (of fewer changes than a subscriber may fall behind): sent in as few notifications as fit.
        let burst: Vec<Change> = (0..500).map(|i| Change::Item(format!("wi_{i:040}"))).collect();
        for change in burst.iter().chain(&burst) {
            store.changes().committed(change.clone());
        }
        store.changes().committed(Change::Run("r2".into()));
        let mut heard = std::collections::HashSet::new();
        while !heard.contains(&Change::Run("r2".into())) {
            heard.insert(receiver.recv().await.unwrap());
        }
        assert!(burst.iter().all(|change| heard.contains(change)), "every change of the burst was heard");
        store.close().await;
    }

    #[tokio::test]
    async fn on_postgres_what_a_closing_store_had_still_to_send_is_sent() {
        let test = TestStore::new().await;
        if test.store.backend() != Backend::Postgres {
            return;
        }
        let other = Store::open(&test.url).await.unwrap();
        let mut receiver = other.changes().subscribe();
        assert_eq!(receiver.recv().await.unwrap(), Change::Unknown);
        test.store.changes().committed(Change::Run("last".into()));
        test.store.close().await;
        assert_eq!(receiver.recv().await.unwrap(), Change::Run("last".into()), "heard by another process's store");
        other.close().await;
    }
}
