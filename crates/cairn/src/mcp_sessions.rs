//! Where `cairn serve` keeps the MCP sessions of older clients: the database's `mcp_sessions` table
//! (`cairn_store::sessions`), so any node sharing the database continues a session another node started. The
//! rmcp side, the state's meaning, is `cairn_mcp::SharedSessions`'s.

use cairn_mcp::{SessionRows, SessionRowsError};
use cairn_store::Store;

/// The sessions of every MCP endpoint of `cairn serve`, in its database.
#[derive(Debug, Clone)]
pub(crate) struct DatabaseSessions {
    store: Store,
}

impl DatabaseSessions {
    /// Sessions kept in `store`.
    pub(crate) fn new(store: Store) -> DatabaseSessions {
        DatabaseSessions { store }
    }
}

#[async_trait::async_trait]
impl SessionRows for DatabaseSessions {
    async fn put(&self, endpoint: &str, id: &str, state: &str, now: i64) -> Result<(), SessionRowsError> {
        Ok(self.store.put_session(endpoint, id, state, now).await?)
    }

    async fn take_up(&self, endpoint: &str, id: &str, now: i64) -> Result<Option<String>, SessionRowsError> {
        Ok(self.store.take_up_session(endpoint, id, now).await?)
    }

    async fn delete(&self, endpoint: &str, id: &str) -> Result<(), SessionRowsError> {
        Ok(self.store.delete_session(endpoint, id).await?)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cairn_mcp::SharedSessions;
    use rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams};
    use rmcp::transport::streamable_http_server::session::{SessionState, SessionStore};

    use super::*;

    #[tokio::test]
    async fn a_stored_session_loads_on_another_handle_of_the_same_endpoint_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&Store::default_url(dir.path())).await.unwrap();
        let rows = || Arc::new(DatabaseSessions::new(store.clone())) as Arc<dyn SessionRows>;
        let params = InitializeRequestParams::new(ClientCapabilities::default(), Implementation::new("old-client", "1.0"));
        let state = SessionState::new(params);
        SharedSessions::new(rows(), "/mcp").store("s1", &state).await.unwrap();

        let other_node = SharedSessions::new(rows(), "/mcp");
        let loaded = other_node.load("s1").await.unwrap().expect("the session is known");
        assert_eq!(loaded.initialize_params.client_info.name, "old-client");
        assert!(SharedSessions::new(rows(), "/roscoe/mcp").load("s1").await.unwrap().is_none());
        other_node.delete("s1").await.unwrap();
        assert!(other_node.load("s1").await.unwrap().is_none());
    }
}
