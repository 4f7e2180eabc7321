//! End-to-end tests of `cairn deepwork serve`: the real binary, driven by an MCP client over stdio and HTTP.

// Test helpers are shared between modules of this one test binary; roots are deprecated upstream but DeepWork
// clients still use them.
#![allow(unreachable_pub, deprecated)]

mod broken_definitions;
mod cli;
mod concurrency;
mod errors;
mod outside_project;
mod protocol;
mod reviews_errors;
mod reviews_gate;
mod reviews_git;
mod reviews_tools;
mod support;
mod workflows;
