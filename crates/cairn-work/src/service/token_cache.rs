//! Tokens as the database last showed them, so that an authenticated request on Postgres need not ask it again: the
//! token's row and its principal, by token id.
//!
//! A token's row changes in one way that matters here, revocation (expiry is checked on every use), and a revocation
//! is announced on the store's changes feed inside the revoking transaction, so every node hears it when it commits.
//! The cache forgets a token when the feed names it, everything when the feed says changes may have been missed, and
//! keeps nothing longer than [`MAX_AGE`]. It serves only while this process's listener is connected, and only
//! entries read since it connected: a revocation committed while it was away was not heard. On SQLite it serves
//! nothing, since other processes (the command line's `token revoke`) write the same file unheard.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cairn_store::changes::Change;
use cairn_store::{Backend, Store};
use cairn_store::work::accounts::{PrincipalRow, TokenRow};
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::TryRecvError;

/// How long an entry is trusted at most, should the listener stop hearing the database without noticing.
const MAX_AGE: Duration = Duration::from_secs(30);

/// A token and the principal it speaks for.
pub(super) type Found = (TokenRow, PrincipalRow);

/// The cache of one [`Service`](super::Service) and its clones.
#[derive(Default)]
pub(super) struct TokenCache {
    /// `None` until the first look (which, on Postgres, subscribes to the changes feed).
    state: Mutex<Option<State>>,
}

impl std::fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let guard = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        f.debug_struct("TokenCache").field("entries", &guard.as_ref().map_or(0, |state| state.entries.len())).finish()
    }
}

struct State {
    /// What the changes feed said since the last look.
    feed: Receiver<Change>,
    /// Grows with each change of a token the feed reports (and each notice that changes were missed), so a read
    /// that a revocation overtook is not kept.
    generation: u64,
    entries: HashMap<String, Entry>,
}

struct Entry {
    found: Found,
    /// The listener's connection it was read under.
    connection: u64,
    read_at: Instant,
}

/// When a read from the database began, to [`TokenCache::keep`] what it found only if nothing overtook it.
pub(super) struct Ticket {
    generation: u64,
    connection: u64,
}

impl TokenCache {
    /// The token `id` as last read, if the cache may serve it; else a ticket for reading it.
    pub(super) fn get(&self, store: &Store, id: &str) -> Result<Found, Option<Ticket>> {
        let changes = store.changes();
        let connection = changes.listening();
        let mut guard = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let state = match guard.as_mut() {
            Some(state) => state,
            None if store.backend() == Backend::Postgres => guard.insert(State {
                // Starts the listener (once per process) on first use.
                feed: changes.subscribe(),
                generation: 0,
                entries: HashMap::new(),
            }),
            None => return Err(None),
        };
        state.catch_up();
        let Some(connection) = connection else { return Err(None) };
        match state.entries.get(id) {
            Some(entry) if entry.connection == connection && entry.read_at.elapsed() < MAX_AGE => Ok(entry.found.clone()),
            _ => Err(Some(Ticket { generation: state.generation, connection })),
        }
    }

    /// Keeps `found`, read with `ticket`, unless the feed reported a change of a token since the ticket was made.
    pub(super) fn keep(&self, ticket: Ticket, found: &Found) {
        let mut guard = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let Some(state) = guard.as_mut() else { return };
        state.catch_up();
        if state.generation == ticket.generation {
            let entry = Entry { found: found.clone(), connection: ticket.connection, read_at: Instant::now() };
            state.entries.insert(found.0.id.clone(), entry);
        }
    }

    /// Token `id` was used at `now` and that was recorded: the kept row says so too.
    pub(super) fn used(&self, id: &str, now: i64) {
        let mut guard = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(entry) = guard.as_mut().and_then(|state| state.entries.get_mut(id)) {
            entry.found.0.last_used_at = Some(now);
        }
    }

    /// Forgets token `id` (this process revoked it; the feed will say so too, a moment later).
    pub(super) fn forget(&self, id: &str) {
        let mut guard = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(state) = guard.as_mut() {
            state.generation += 1;
            state.entries.remove(id);
        }
    }
}

impl State {
    /// Applies what the feed said since the last look.
    fn catch_up(&mut self) {
        loop {
            match self.feed.try_recv() {
                Ok(Change::Token(id)) => {
                    self.generation += 1;
                    self.entries.remove(&id);
                }
                Ok(Change::Unknown) | Err(TryRecvError::Lagged(_)) => {
                    self.generation += 1;
                    self.entries.clear();
                }
                Ok(Change::Run(_) | Change::Item(_)) => {}
                Err(TryRecvError::Empty | TryRecvError::Closed) => return,
            }
        }
    }
}
