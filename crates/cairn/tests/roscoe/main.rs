//! End-to-end tests of `cairn roscoe mcp` (and the `roscoe mcp` entry name): the real binary, driven by rmcp's
//! client over stdio, with a private `CAIRN_HOME` and git isolated from the machine.

// Test helpers are shared between the modules of this one test binary.
#![allow(unreachable_pub)]

mod authoring;
#[path = "../common/cairn_serve.rs"]
mod cairn_serve;
mod docs;
mod isolation;
mod protocol;
mod runs_concurrency;
mod runs_crash;
mod runs_fanout;
mod runs_lifecycle;
mod runs_subworkflow;
mod runs_support;
mod runs_test_workflow;
mod schema;
mod skills;
mod support;
