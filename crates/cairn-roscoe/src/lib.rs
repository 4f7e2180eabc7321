//! The Roscoe-compatible surface of cairn: state-machine workflows written in YAML.
//!
//! [`definition`] reads a workflow file into a [`definition::Workflow`] and checks it in the spec's three stages
//! (schema → integrity → lint), returning every problem as a [`definition::Diagnostic`] with a stable code. It does
//! no I/O and knows nothing about MCP, runs or storage.
//!
//! The authoring facade is [`Service`]: given a [`Scope`] (resolved from a call's `cwd` / `global: true`, see
//! [`scope`], within the folders the server serves: its [`Reach`]) it lists, reads, writes, moves, duplicates, renames (with a formatting-preserving reference cascade)
//! and deletes workflow files in the repo and global [`sources`], and validates and lints them, returning plain
//! result structs or an [`Error`] with the seed's codes.
//!
//! Every action is taken by an [`Actor`] (the principal behind the call, and whether it may make the server run
//! `script` nodes); the facades record who did what and refuse scripts to those who may not run them.
//!
//! Runs have their own facade, [`Runs`] (in [`runs`]): it stores runs in the database (`cairn-store`), applies each
//! event with the pure state machine [`engine::apply`] in one transaction with a version check, and carries out the
//! effects the engine asks for (scripts, child runs), for the run tools and `test_workflow`.
//!
//! Two read-only authoring helpers sit beside it, both plain data with no I/O: [`diagram`] draws a workflow as
//! Mermaid plus nodes and edges (`get_workflow_diagram`), and [`authoring_guide`] assembles what
//! `get_workflow_schema` returns (schema, executors, the models of `roscoe.yaml`, the authoring gotchas).
//!
//! [`skills`] adds the facade's skill import (find `SKILL.md` files, hand the host a converter prompt, write the
//! workflow it returns with the skill's scripts), and [`docs`] the five docs tools over cairn's own documentation
//! (the `cairn-docs` crate, which embeds `docs/roscoe/`).
//!
//! [`tools`] serves all of this over MCP: [`RoscoeServer`] lists the tools (one file each under
//! `tools/`) and dispatches each call to one [`Service`] or [`Runs`] method; it is the only module that knows rmcp.

mod actor;
mod brief;
pub mod authoring_guide;
pub mod clock;
pub mod definition;
pub mod diagram;
pub mod docs;
pub mod engine;
mod error;
mod files;
#[cfg(test)]
mod hostile_input;
mod references;
mod reach;
mod run_progress;
pub mod runs;
pub mod scope;
mod service;
mod summaries;
pub mod terminal_text;
pub mod signature;
pub mod skills;
pub mod source;
pub mod sources;
mod tool_args;
pub mod tool_groups;
mod unquoted;
pub mod tools;
mod yaml_edit;

pub use actor::Actor;
pub use error::{Error, Referrer};
pub use reach::Reach;
pub use scope::Scope;
pub use service::check::{Linted, Validated};
pub use service::crud::{Created, Deleted, References, TriggerState, Updated, WorkflowDetail, WorkflowSummary};
pub use service::relocate::{Duplicated, Moved, Renamed};
pub use service::settings::{Settings, SettingsFile};
pub use service::{Body, LintWarning, Service, Subject};
pub use engine::{Budget, Execution};
pub use runs::{Runs, ScheduleView, StartOptions, StartRequest};
pub use source::Source;
pub use tool_groups::ToolGroups;
pub use tools::RoscoeServer;
