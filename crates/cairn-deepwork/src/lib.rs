//! The DeepWork-compatible surface of cairn.
//!
//! Agents run multi-step jobs (`.deepwork/jobs/<job>/job.yml`) one step at a time through the MCP tools in [`tools`],
//! served by [`DeepworkServer`]. The plain-Rust facade [`Deepwork`] (in `service`) does the work: it finds and parses
//! jobs ([`job`], [`discovery`], cached and invalidated on change), keeps each session's workflow stack in files
//! ([`session`], [`session_store`]: locked per call, written atomically), tells the agent what each step needs
//! ([`step_info`]), runs the quality gate ([`gate`]) and keeps status files for other tools ([`status`]).
//!
//! The review pipeline: rules come from `.deepreview` files ([`deepreview`]), DeepSchemas ([`deepschema`]) and job
//! steps' review blocks (`gate/step_reviews.rs`), all as [`review_rule::ReviewRule`]s with DeepWork's glob semantics
//! ([`glob`]); [`changed_files`] asks git what changed; [`review`] turns rules and files into tasks, review ids and
//! instruction files; [`reviews`] holds the facade's review operations.

mod arguments;
pub mod changed_files;
mod confined;
pub mod deepreview;
pub mod deepschema;
pub mod discovery;
pub mod gate;
pub mod glob;
pub mod hooks;
pub mod host_names;
pub mod ids;
pub mod job;
mod platform_text;
mod project_files;
mod process;
pub mod review;
pub mod review_rule;
pub mod reviews;
mod server_text;
pub mod service;
pub mod session;
pub mod session_store;
pub mod standard_jobs;
pub mod status;
pub mod step_info;
pub mod tools;

pub use host_names::HostNames;
pub use service::{Config, Deepwork, Error};
pub use tools::{DeepworkServer, RootSource};
