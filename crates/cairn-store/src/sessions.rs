//! `mcp_sessions`: the `initialize` parameters of MCP clients that keep a session (`Mcp-Session-Id`), so a session
//! started on one `cairn serve` node can be continued on another that shares the database.
//!
//! The state is opaque JSON text here; what it means is rmcp's business (`cairn_mcp::SharedSessions` turns it to and
//! from text). Sessions unused for [`KEEP_MS`] are forgotten.

use sqlx::Row;

use crate::{Error, Store};

/// How long a session nobody uses is kept: 30 days.
pub const KEEP_MS: i64 = 30 * 24 * 60 * 60 * 1000;

impl Store {
    /// Stores (or replaces) the state of session `id` of `endpoint` at `now`, forgetting sessions unused for
    /// [`KEEP_MS`].
    pub async fn put_session(&self, endpoint: &str, id: &str, state: &str, now: i64) -> Result<(), Error> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO mcp_sessions (endpoint, id, state, created_at, used_at) VALUES ($1, $2, $3, $4, $4) \
             ON CONFLICT (endpoint, id) DO UPDATE SET state = excluded.state, used_at = excluded.used_at",
        )
        .bind(endpoint)
        .bind(id)
        .bind(state)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM mcp_sessions WHERE used_at < $1").bind(now - KEEP_MS).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The state of session `id` of `endpoint`, if it is known and was used within [`KEEP_MS`]; marks it used at
    /// `now`.
    pub async fn take_up_session(&self, endpoint: &str, id: &str, now: i64) -> Result<Option<String>, Error> {
        let mut tx = self.begin_write().await?;
        let row = sqlx::query("SELECT state FROM mcp_sessions WHERE endpoint = $1 AND id = $2 AND used_at >= $3")
            .bind(endpoint)
            .bind(id)
            .bind(now - KEEP_MS)
            .fetch_optional(&mut *tx)
            .await?;
        if row.is_some() {
            sqlx::query("UPDATE mcp_sessions SET used_at = $1 WHERE endpoint = $2 AND id = $3")
                .bind(now)
                .bind(endpoint)
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(row.map(|r| r.try_get("state")).transpose()?)
    }

    /// Forgets session `id` of `endpoint` (the client ended it).
    pub async fn delete_session(&self, endpoint: &str, id: &str) -> Result<(), Error> {
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM mcp_sessions WHERE endpoint = $1 AND id = $2")
            .bind(endpoint)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::TestStore;

    use super::KEEP_MS;

    #[tokio::test]
    async fn sessions_are_kept_per_endpoint_replaced_forgotten_and_expire() {
        let test = TestStore::new().await;
        let store = &test.store;
        store.put_session("/mcp", "s1", "{\"a\":1}", 10).await.unwrap();
        assert_eq!(store.take_up_session("/mcp", "s1", 20).await.unwrap().as_deref(), Some("{\"a\":1}"));
        assert_eq!(store.take_up_session("/roscoe/mcp", "s1", 20).await.unwrap(), None, "another endpoint's");
        store.put_session("/mcp", "s1", "{\"a\":2}", 30).await.unwrap();
        assert_eq!(store.take_up_session("/mcp", "s1", 40).await.unwrap().as_deref(), Some("{\"a\":2}"));
        store.delete_session("/mcp", "s1").await.unwrap();
        assert_eq!(store.take_up_session("/mcp", "s1", 50).await.unwrap(), None);

        store.put_session("/mcp", "old", "{}", 100).await.unwrap();
        assert_eq!(store.take_up_session("/mcp", "old", 101 + KEEP_MS).await.unwrap(), None, "unused too long");
        store.put_session("/mcp", "new", "{}", 200 + KEEP_MS).await.unwrap();
        let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM mcp_sessions").fetch_one(store.pool()).await.unwrap();
        assert_eq!(left, 1, "storing a session forgets the expired ones");
    }
}
