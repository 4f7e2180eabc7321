//! End-to-end tests of `cairn deepwork serve`: the real binary, driven by an MCP client over stdio and HTTP.

// Test helpers are shared between modules of this one test binary; roots are deprecated upstream but DeepWork
// clients still use them.
#![allow(unreachable_pub, deprecated)]

mod broken_definitions;
mod cli;
mod concurrency;
mod errors;
mod host_names;
mod http_guard;
mod malformed;
mod outside_project;
mod protocol;
#[path = "../common/raw_stdio.rs"]
mod raw_stdio;
mod reviews_errors;
mod reviews_gate;
mod reviews_git;
mod reviews_tools;
mod slow_clients;
#[path = "../common/slow_connections.rs"]
mod slow_connections;
#[path = "../common/stdio_faults.rs"]
mod stdio_faults;
mod support;
#[path = "../common/tool_call.rs"]
mod tool_call;
mod workflows;
