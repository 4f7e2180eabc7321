//! Postgres's side of [`Changes::committed`](super::Changes::committed): the changes this process committed, sent to
//! every node's listener as `pg_notify` on [`CHANNEL`](super::CHANNEL) just after their commits.
//!
//! One task per store sends them. While one notification is on its way the next changes gather, and go together in
//! the next (lines of one payload, each change once), so a busy node sends far fewer notifications than it commits
//! writes, and an idle one sends each change at once.
//!
//! Why after the commit and not inside the writing transaction, where it would be atomic with the write: Postgres
//! serializes the commits of all transactions that notify, holding a database-wide lock through each one's WAL
//! flush, so concurrent writes that notify cannot share a flush. With the notification inside, an item change
//! managed half as many commits a second (`benches/postgres/claim.sh`). The price: a process that dies between a
//! commit and its notification leaves the other nodes to see that change on their fallback poll.

use std::collections::HashSet;
use std::sync::Mutex;

use sqlx::{AnyConnection, AnyPool, Connection};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::{CHANNEL, NOTIFY};

/// The largest payload sent: Postgres refuses one of 8,000 bytes or more.
const MAX_PAYLOAD: usize = 7_900;

/// The sending end; the task holds the receiver and the pool, and ends when the sender is gone.
pub(super) struct Outbox {
    pool: AnyPool,
    /// The sender and the task, once the first change started it (inside the tokio runtime it was posted from).
    running: Mutex<Option<(mpsc::UnboundedSender<String>, JoinHandle<()>)>>,
}

impl Outbox {
    pub(super) fn new(pool: AnyPool) -> Outbox {
        Outbox { pool, running: Mutex::new(None) }
    }

    /// Sends `line` soon. Outside a tokio runtime it cannot be sent, and subscribers see the change on their
    /// fallback poll.
    pub(super) fn post(&self, line: String) {
        let mut running = self.running.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if running.is_none() {
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                tracing::warn!("a change was committed outside a tokio runtime; other nodes see it on their next poll");
                return;
            };
            let (sender, receiver) = mpsc::unbounded_channel();
            *running = Some((sender, runtime.spawn(send_all(self.pool.clone(), receiver))));
        }
        if let Some((sender, _)) = running.as_ref() {
            let _ = sender.send(line);
        }
    }

    /// Sends what is still waiting and stops the task (a later change starts another).
    pub(super) async fn flush(&self) {
        let running = self.running.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        if let Some((sender, task)) = running {
            drop(sender);
            let _ = task.await;
        }
    }
}

/// The task: waits for a line, takes every line that came meanwhile, and sends them in as few notifications as
/// fit; until the sender is gone and nothing is left.
///
/// It sends on a connection of its own, taken out of the pool (sqlx would check it with a round trip each time it
/// went back) and set to `synchronous_commit = off`: a transaction that only notifies then commits without waiting
/// for its WAL flush. Nothing is lost by that: the notification reaches the listeners at the commit, and were the
/// database to crash before the flush, the other nodes would see the change on their fallback poll, as when this
/// process dies before sending it. After an error the next notification opens a new connection.
async fn send_all(pool: AnyPool, mut receiver: mpsc::UnboundedReceiver<String>) {
    let mut conn: Option<AnyConnection> = None;
    while let Some(first) = receiver.recv().await {
        let mut lines = vec![first];
        while let Ok(line) = receiver.try_recv() {
            lines.push(line);
        }
        for payload in payloads(lines) {
            if let Err(error) = send(&pool, &mut conn, &payload).await {
                conn = None;
                tracing::warn!("a change notification was not sent (other nodes see it on their next poll): {error}");
            }
        }
    }
    if let Some(conn) = conn {
        let _ = conn.close().await;
    }
}

/// Sends `payload` on `conn`, connecting first if there is none.
async fn send(pool: &AnyPool, conn: &mut Option<AnyConnection>, payload: &str) -> Result<(), sqlx::Error> {
    let conn = match conn {
        Some(conn) => conn,
        None => {
            let mut opened = pool.acquire().await?.detach();
            sqlx::query("SET synchronous_commit = off").execute(&mut opened).await?;
            conn.insert(opened)
        }
    };
    sqlx::query(NOTIFY).bind(CHANNEL).bind(payload).execute(conn).await?;
    Ok(())
}

/// `lines`, each once, joined by newlines into payloads of at most [`MAX_PAYLOAD`] bytes.
fn payloads(lines: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut payloads: Vec<String> = Vec::new();
    for line in lines.into_iter().filter(|line| seen.insert(line.clone())) {
        match payloads.last_mut() {
            Some(payload) if payload.len() + 1 + line.len() <= MAX_PAYLOAD => {
                payload.push('\n');
                payload.push_str(&line);
            }
            _ => payloads.push(line),
        }
    }
    payloads
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_go_once_each_in_payloads_that_fit() {
        assert_eq!(payloads(vec!["item:a".into(), "run:b".into(), "item:a".into()]), vec!["item:a\nrun:b"]);
        let many: Vec<String> = (0..1000).map(|i| format!("item:wi_{i:040}")).collect();
        let sent = payloads(many.clone());
        assert!(sent.len() > 1 && sent.iter().all(|p| p.len() <= MAX_PAYLOAD), "{:?}", sent.iter().map(String::len));
        assert_eq!(sent.join("\n").lines().collect::<Vec<_>>(), many, "every line, in order");
    }
}
