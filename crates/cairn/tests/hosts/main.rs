//! cairn inside the real hosts: Claude Code, Codex CLI and Gemini CLI from npm, each run offline against a local
//! stand-in for its model API that plays the model with scripted tool calls — Claude Code through the repository's
//! plugin (`plugins/claude`) or a plain `.mcp.json`, Codex and Gemini CLI as `cairn setup` set them up — and then
//! checking cairn's own state.

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
mod codex;
#[path = "../common/database.rs"]
mod database;
mod deepwork_job;
mod every_surface;
mod gemini;
#[path = "../common/gemini.rs"]
mod gemini_api;
#[path = "../common/host_script.rs"]
mod host_script;
#[path = "../common/responses.rs"]
mod responses;
mod roscoe_consensus;
mod work_claim;
