//! MCP progress notifications of one tool call: when the request carries `_meta.progressToken`, [`Progress`] sends
//! `notifications/progress` for it to the calling client (numbered by the caller, with a message, no total). A client
//! that is gone or slow loses a notification; the call goes on.

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};

use crate::registry::Call;

/// Where a call's progress goes.
#[derive(Clone, Debug)]
pub struct Progress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
}

impl Progress {
    /// The progress of `call`, when its request asked for progress.
    pub fn of(call: &Call<'_>) -> Option<Progress> {
        let token = call.context.meta.get_progress_token()?;
        Some(Progress { peer: call.context.peer.clone(), token })
    }

    /// Sends notification number `progress` saying `message`.
    pub async fn send(&self, progress: u32, message: String) {
        let notification = ProgressNotificationParam::new(self.token.clone(), f64::from(progress));
        let _ = self.peer.notify_progress(notification.with_message(message)).await;
    }
}
