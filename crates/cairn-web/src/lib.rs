//! `cairn serve`: one HTTP server for everything a person or an agent reaches over the network.
//!
//! [`App`] holds the domain services (the roscoe authoring service, an optional DeepWork project, the database) and
//! [`App::router`] mounts them: `/roscoe/mcp` (roscoe tools), `/deepwork/mcp` (DeepWork tools for the one project
//! given with `--project`), `/mcp` (work and decisions tools behind bearer tokens, `work_mcp.rs`), and `GET /healthz`.
//! Every route sits behind the [`host_check`] (loopback `Host` and
//! `Origin` only, unless more hosts are allowed), so a web page on another site cannot drive the server through the
//! browser (DNS rebinding).
//!
//! The REST API and the web UI call the same domain services as the MCP tools, never the MCP adapters.

mod app;
mod health;
mod host_check;
mod work_mcp;

pub use app::{App, DeepworkProject};
