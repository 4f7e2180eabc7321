//! The DeepWork-compatible surface of cairn.
//!
//! Agents run multi-step jobs (`.deepwork/jobs/<job>/job.yml`) one step at a time through the MCP tools in [`tools`],
//! served by [`DeepworkServer`]. The plain-Rust facade [`Deepwork`] (in `service`) does the work: it finds and parses
//! jobs ([`job`], [`discovery`], cached and invalidated on change), keeps each session's workflow stack in files
//! ([`session`], [`session_store`]: locked per call, written atomically), tells the agent what each step needs
//! ([`step_info`]), runs the quality gate ([`gate`]) and keeps status files for other tools ([`status`]).

pub mod discovery;
pub mod gate;
pub mod ids;
pub mod job;
mod server_text;
pub mod service;
pub mod session;
pub mod session_store;
pub mod standard_jobs;
pub mod status;
pub mod step_info;
pub mod tools;
mod yaml;

pub use service::{Config, Deepwork, Error};
pub use tools::{DeepworkServer, RootSource};
