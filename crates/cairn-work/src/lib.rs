//! The work surface of cairn: coordinating many agents through work items, on top of a minimal decisions backend.
//!
//! - [`auth`]: principals (person / agent / service), scopes and bearer tokens; a [`Caller`] is who a request is.
//! - [`Service`] (`service.rs`): the facade — accounts and tokens, spaces and versioned documents, work items (claim
//!   by compare-and-swap, hand-off, update rules, an append-only event log), evidence and `work_status`.
//! - `item.rs`: the work item's JSON shape and its state machine as pure functions; `status.rs` + `status/`: the
//!   "what is really built" algorithm (Markdown tables, pull-request references, claimed states, findings).
//! - `page.rs`: page sizes and HMAC-signed keyset page tokens; `text.rs`, `time.rs`, `ids.rs`: argument checks,
//!   RFC 3339 times, prefixed time-ordered ids.
//! - [`tools`]: the MCP adapter, [`WorkServer`], one file per tool; the only module that knows rmcp.
//!
//! All data lives in the cairn database through `cairn-store`; nothing about a client is kept in memory.

pub mod auth;
mod error;
mod ids;
mod item;
mod page;
mod preview;
mod service;
mod status;
mod text;
mod time;
pub mod tools;

pub use auth::{Caller, Kind, Scope, WORK_READ, WORK_WRITE};
pub use error::Error;
pub use item::{Handoff, WorkItem};
pub use service::{
    ClaimedNext, Document, DocumentSummary, Evidence, EvidenceInput, ItemEvent, ItemHistory, ItemList, ItemRef,
    ItemUpdate, LinkedPullRequest, ListQuery, NewItemInput, NewToken, OwnedAccount, RecordedEvidence, SIGN_IN_TTL_MS,
    Service, SignIn, Space, TokenGrant, TokenInfo,
};
pub use status::{AssessedPiece, PullRequestState};
pub use tools::WorkServer;
