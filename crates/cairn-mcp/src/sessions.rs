//! MCP sessions kept where every `cairn serve` node sharing them can continue a session another node started
//! (rmcp's session store: the client's `initialize` parameters are saved after the handshake; a node that gets a
//! request for a session it does not hold replays the handshake from them and serves the request).
//!
//! Only clients of protocol versions before 2026-07-28 have sessions; newer clients are stateless and never touch
//! this. Where the state is kept is the server's business ([`SessionRows`]: `cairn serve` keeps it in its database);
//! what it means is rmcp's, and [`SharedSessions`] turns it to and from opaque text.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::transport::streamable_http_server::session::{SessionState, SessionStore, SessionStoreError};

/// Why kept session state could not be read or written.
pub type SessionRowsError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Where the sessions of a server's HTTP endpoints are kept: opaque text per endpoint and session id.
#[async_trait::async_trait]
pub trait SessionRows: Debug + Send + Sync + 'static {
    /// Stores (or replaces) the state of session `id` of `endpoint` at `now` (epoch ms).
    async fn put(&self, endpoint: &str, id: &str, state: &str, now: i64) -> Result<(), SessionRowsError>;

    /// The state of session `id` of `endpoint`, if it is known and still kept; marks it used at `now`.
    async fn take_up(&self, endpoint: &str, id: &str, now: i64) -> Result<Option<String>, SessionRowsError>;

    /// Forgets session `id` of `endpoint` (the client ended it).
    async fn delete(&self, endpoint: &str, id: &str) -> Result<(), SessionRowsError>;
}

/// The sessions of one MCP endpoint (its path, e.g. `/roscoe/mcp`), kept in [`SessionRows`] shared by every node.
#[derive(Debug, Clone)]
pub struct SharedSessions {
    rows: Arc<dyn SessionRows>,
    endpoint: String,
}

impl SharedSessions {
    /// The sessions of the endpoint at `endpoint` in `rows` (a session of one endpoint is never continued on
    /// another).
    pub fn new(rows: Arc<dyn SessionRows>, endpoint: &str) -> SharedSessions {
        SharedSessions { rows, endpoint: endpoint.to_owned() }
    }
}

#[async_trait::async_trait]
impl SessionStore for SharedSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Some(state) = self.rows.take_up(&self.endpoint, session_id, now_ms()).await? else {
            return Ok(None);
        };
        Ok(Some(serde_json::from_str(&state)?))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let state = serde_json::to_string(state)?;
        self.rows.put(&self.endpoint, session_id, &state, now_ms()).await
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        self.rows.delete(&self.endpoint, session_id).await
    }
}

/// Now, in epoch milliseconds.
fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or_default()
}
