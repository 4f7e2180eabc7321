//! The Roscoe-compatible surface of cairn: state-machine workflows written in YAML.
//!
//! So far this crate holds the *definition* half only: [`definition`] reads a workflow file into a
//! [`definition::Workflow`] and checks it in the spec's three stages (schema → integrity → lint), returning every
//! problem as a [`definition::Diagnostic`] with a stable code. It does no I/O and knows nothing about MCP, runs or
//! storage; the engine, the service facade and the tools come later and build on it.

pub mod definition;
