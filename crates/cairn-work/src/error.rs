//! The one error type of the work surface, with the stable codes of the spec (§2.5): `invalid_argument`,
//! `insufficient_scope`, `not_found`, `permission_denied`, `failed_precondition`, `conflict` (and `internal` for a
//! database failure). Every message says what was wrong and what to do; turning an error into a tool result is the
//! tools module's job.

use serde_json::{Value, json};

use cairn_mcp::access::Scope;

/// Why a work or decisions operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A wrong, missing or out-of-range argument.
    #[error("{0}")]
    InvalidArgument(String),
    /// The token lacks a scope the tool needs.
    #[error(
        "{tool} needs scopes {}; this token has {}",
        Scope::join(needed),
        if has.is_empty() { "none".to_owned() } else { Scope::join(has) }
    )]
    InsufficientScope {
        /// The tool called.
        tool: String,
        /// The scopes it needs.
        needed: Vec<Scope>,
        /// The scopes the token holds.
        has: Vec<Scope>,
    },
    /// The account, space, document or item does not exist or is not the caller's to see.
    #[error("{0}")]
    NotFound(String),
    /// Visible, but this principal may not do this.
    #[error("{0}")]
    PermissionDenied(String),
    /// The item is in the wrong state for this.
    #[error("{0}")]
    FailedPrecondition(String),
    /// Someone else holds the item, or evidence contradicts earlier evidence.
    #[error("{message}")]
    Conflict {
        /// What clashed.
        message: String,
        /// Structured facts about the clash (the holder, the current version …).
        details: Value,
    },
    /// The database failed.
    #[error("internal error: {0}; try again, and report it if it persists")]
    Internal(String),
}

impl Error {
    /// The stable code.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidArgument(_) => "invalid_argument",
            Error::InsufficientScope { .. } => "insufficient_scope",
            Error::NotFound(_) => "not_found",
            Error::PermissionDenied(_) => "permission_denied",
            Error::FailedPrecondition(_) => "failed_precondition",
            Error::Conflict { .. } => "conflict",
            Error::Internal(_) => "internal",
        }
    }

    /// Structured facts about the error (`{}` when there are none).
    pub fn details(&self) -> Value {
        match self {
            Error::InsufficientScope { needed, has, .. } => json!({
                "needed": needed.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
                "has": has.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            }),
            Error::Conflict { details, .. } => details.clone(),
            _ => json!({}),
        }
    }

    /// `{"error": {code, message, details}}`, the body of an error result.
    pub fn body(&self) -> Value {
        json!({"error": {"code": self.code(), "message": self.to_string(), "details": self.details()}})
    }

    /// `not_found` for a thing of `what` kind and id.
    pub(crate) fn not_found(what: &str, id: &str) -> Error {
        Error::NotFound(format!("no {what} '{id}' in an account you can use; check the id ({what}s are listed by the list tools)"))
    }
}

impl From<cairn_store::Error> for Error {
    fn from(error: cairn_store::Error) -> Error {
        tracing::error!("{error}");
        Error::Internal(error.to_string())
    }
}
