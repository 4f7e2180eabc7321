//! Protocol plumbing shared by every cairn surface.
//!
//! A surface (deepwork, roscoe, work) implements [`Handler`] in its own `tools` module and hands it, as a [`Server`]
//! (the one `rmcp::ServerHandler`), to one of the transports here: [`serve_stdio`] (which answers malformed JSON-RPC
//! lines itself before rmcp sees them), [`serve_http`] (Streamable HTTP) or [`serve_legacy_sse`] (the old HTTP+SSE
//! protocol DeepWork's `--transport sse` speaks); [`SharedSessions`] lets any node sharing its [`SessionRows`] continue
//! an HTTP session another node started, and [`InFlight`] lets a stopping HTTP server finish the calls in flight. Every
//! HTTP server, `cairn serve` included, runs [`serve_router`], the serving loop with time limits for slow clients,
//! behind [`AllowedHosts`] (the `Host`, `Origin` and `Sec-Fetch-Site` guard). The helpers in [`envelope`] build the
//! result shapes the specs define, [`args`] turns raw tool arguments into typed parameters with errors an agent can act
//! on, [`roots`] asks the client for its workspace root, and [`describe`] builds a tool's `tools/list` entry, its input
//! schema in the portable form every host accepts (`portable`).
//! Each surface lists its tools once in a [`registry::Registry`], which shows and lets through only what the caller's
//! [`access::Access`] (its principal and token scopes, the same model on every surface) allows. A message too large
//! or nested too deep is answered with its own id on every transport ([`MessageLimits`] on HTTP), and
//! [`is_housekeeping`] tells the rate limit of `cairn serve` protocol housekeeping from calls.
//!
//! This crate knows nothing about any surface's domain.

pub mod access;
pub mod args;
pub mod describe;
pub mod elicit;
mod drain;
mod error_fit;
pub mod envelope;
mod host_guard;
mod http;
pub mod listener;
mod lines;
mod message_limits;
mod one_write;
mod priming;
mod portable;
pub mod progress;
pub mod roots;
pub mod registry;
mod server;
mod serving;
mod session_end;
mod sessions;
mod shallow;
mod sse;
mod stdio;
mod verdict;

pub use drain::{DRAIN_LIMIT, InFlight, shutdown_signal};
pub use host_guard::{AllowedHosts, Refusal};
pub use http::{HttpEndpoint, HttpOptions, http_service, serve_http};
pub use server::{CallFuture, Handler, Server, ServerFactory};
pub use serving::{BODY_IDLE_TIMEOUT, HEADER_READ_TIMEOUT, serve_router};
pub use message_limits::MessageLimits;
pub use one_write::OneWrite;
pub use session_end::SessionEnd;
pub use sessions::{SessionRows, SessionRowsError, SharedSessions};
pub use shallow::is_housekeeping;
pub use sse::serve_legacy_sse;
pub use stdio::{MAX_LINE_BYTES, serve_stdio};
