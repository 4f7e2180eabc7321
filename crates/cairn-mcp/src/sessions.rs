//! MCP sessions kept in the database, so that any `cairn serve` node sharing it can continue a session another node
//! started (rmcp's session store: the client's `initialize` parameters are saved after the handshake; a node that
//! gets a request for a session it does not hold replays the handshake from them and serves the request).
//!
//! Only clients of protocol versions before 2026-07-28 have sessions; newer clients are stateless and never touch
//! this. The rows themselves are `cairn_store::sessions`.

use std::time::{SystemTime, UNIX_EPOCH};

use cairn_store::Store;
use rmcp::transport::streamable_http_server::session::{SessionState, SessionStore, SessionStoreError};

/// The sessions of one MCP endpoint (its path, e.g. `/roscoe/mcp`) in `store`.
#[derive(Debug, Clone)]
pub struct DatabaseSessions {
    store: Store,
    endpoint: String,
}

impl DatabaseSessions {
    /// The sessions of the endpoint at `endpoint` (a session of one endpoint is never continued on another).
    pub fn new(store: Store, endpoint: &str) -> DatabaseSessions {
        DatabaseSessions { store, endpoint: endpoint.to_owned() }
    }
}

#[async_trait::async_trait]
impl SessionStore for DatabaseSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Some(state) = self.store.take_up_session(&self.endpoint, session_id, now_ms()).await? else {
            return Ok(None);
        };
        Ok(Some(serde_json::from_str(&state)?))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let state = serde_json::to_string(state)?;
        Ok(self.store.put_session(&self.endpoint, session_id, &state, now_ms()).await?)
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        Ok(self.store.delete_session(&self.endpoint, session_id).await?)
    }
}

/// Now, in epoch milliseconds.
fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams};

    use super::*;

    #[tokio::test]
    async fn a_stored_session_loads_on_another_handle_of_the_same_endpoint_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&Store::default_url(dir.path())).await.unwrap();
        let params = InitializeRequestParams::new(ClientCapabilities::default(), Implementation::new("old-client", "1.0"));
        let state = SessionState::new(params);
        DatabaseSessions::new(store.clone(), "/mcp").store("s1", &state).await.unwrap();

        let other_node = DatabaseSessions::new(store.clone(), "/mcp");
        let loaded = other_node.load("s1").await.unwrap().expect("the session is known");
        assert_eq!(loaded.initialize_params.client_info.name, "old-client");
        assert!(DatabaseSessions::new(store.clone(), "/roscoe/mcp").load("s1").await.unwrap().is_none());
        other_node.delete("s1").await.unwrap();
        assert!(other_node.load("s1").await.unwrap().is_none());
    }
}
