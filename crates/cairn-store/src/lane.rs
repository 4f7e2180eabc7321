//! Connections an item change hands back clean, kept checked out of sqlx's pool for the next read.
//!
//! sqlx checks every connection returned to its pool with a round trip of its own (a `Sync` and its
//! `ReadyForQuery` on Postgres, a message to the connection's thread and back on SQLite), in case a query was
//! abandoned half-way. A connection whose work finished — its last statement answered — needs no such check, and
//! an item change makes one every time: [`Store::write_on`](crate::Store::write_on) and
//! [`Store::release`](crate::Store::release) put it here, and [`Store::read`](crate::Store::read) takes it from
//! here before asking the pool. A connection dropped anywhere else goes back to the pool as always, checked.
//!
//! The connections stay the pool's (they count against its size), and at most half the pool waits here, so the pool
//! is never starved. One that waited longer than [`MAX_IDLE`] goes back to the pool, whose idle timeout and lifetime
//! then apply.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use sqlx::Any;
use sqlx::pool::PoolConnection;

/// How long a connection waits here before it goes back to the pool.
const MAX_IDLE: Duration = Duration::from_secs(10);

/// The waiting connections, the latest handed back last.
#[derive(Debug)]
pub(crate) struct Lane {
    idle: Mutex<Vec<(PoolConnection<Any>, Instant)>>,
    /// How many wait here at most.
    keep: usize,
}

impl Lane {
    /// A lane for a pool of `pool_size` connections.
    pub(crate) fn new(pool_size: u32) -> Lane {
        Lane { idle: Mutex::new(Vec::new()), keep: pool_size as usize / 2 }
    }

    /// The connection handed back last, if one waits; connections that waited too long go back to the pool.
    pub(crate) fn take(&self) -> Option<PoolConnection<Any>> {
        let mut idle = self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (conn, since) = idle.pop()?;
        if since.elapsed() <= MAX_IDLE {
            return Some(conn);
        }
        // The others waited longer still.
        idle.clear();
        None
    }

    /// Keeps `conn`, whose last statement was answered, for [`Lane::take`]; back to the pool when enough wait.
    pub(crate) fn put(&self, conn: PoolConnection<Any>) {
        let mut idle = self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if idle.len() < self.keep {
            idle.push((conn, Instant::now()));
        }
    }

    /// How many connections wait here.
    pub(crate) fn waiting(&self) -> usize {
        self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).len()
    }

    /// Sends every waiting connection back to the pool (before it closes).
    pub(crate) fn clear(&self) {
        self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clear();
    }
}

impl Drop for Lane {
    /// Going back to the pool takes a tokio runtime (the pool checks a returned connection in a task of its own);
    /// when the last store is dropped outside one, the waiting connections are closed here instead.
    fn drop(&mut self) {
        if tokio::runtime::Handle::try_current().is_err() {
            let idle = self.idle.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
            for (conn, _) in idle.drain(..) {
                drop(conn.detach());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::testing::TestStore;

    #[tokio::test]
    async fn a_connection_handed_back_serves_the_next_read_and_the_store_still_closes() {
        let test = TestStore::new().await;
        let mut conn = test.store.read().await.unwrap();
        sqlx::query("CREATE TEMPORARY TABLE lane_marker (n BIGINT)").execute(&mut *conn).await.unwrap();
        test.store.release(conn);
        let mut next = test.store.read().await.unwrap();
        let marked = sqlx::query("SELECT n FROM lane_marker").fetch_all(&mut *next).await.err();
        assert!(marked.is_none(), "the next read has the connection handed back (its temporary table): {marked:?}");

        // At most half the pool waits in the lane; the rest goes back to the pool.
        let size = test.store.backend().max_connections() as usize;
        let mut held = vec![next];
        for _ in 1..size {
            held.push(test.store.read().await.unwrap());
        }
        for conn in held {
            test.store.release(conn);
        }
        assert_eq!(test.store.lane.waiting(), size / 2);
        let (idle, _) = test.store.pool_connections();
        assert!(idle >= size / 2, "the lane's connections count as idle in the pool's figures: {idle}");

        let closed = tokio::time::timeout(Duration::from_secs(10), test.store.close()).await;
        assert!(closed.is_ok(), "closing the store does not wait for the lane's connections forever");
    }
}
