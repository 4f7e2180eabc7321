//! cairn inside the real Claude Code: the CLI from npm, run offline against a local stand-in for the Anthropic API
//! that plays the model with scripted tool calls, using the repository's plugin (`plugins/claude`) or a plain
//! `.mcp.json`, and then checking cairn's own state.

// Test helpers are shared between the modules of this one test binary.
#![allow(unreachable_pub)]

#[path = "../common/anthropic.rs"]
mod anthropic;
#[path = "../common/cairn_serve.rs"]
mod cairn_serve;
#[path = "../common/rest.rs"]
mod rest;
#[path = "../common/claude_code.rs"]
mod claude_code;
#[path = "../common/database.rs"]
mod database;
mod deepwork_job;
mod roscoe_consensus;
mod work_claim;
