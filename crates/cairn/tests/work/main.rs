//! End-to-end tests of the work surface: `cairn work mcp` over stdio and `/mcp` of `cairn serve` over Streamable
//! HTTP, both with real tokens made by `cairn work token create`, on a private `CAIRN_HOME` and a fresh database
//! (SQLite, or Postgres when `CAIRN_TEST_POSTGRES_URL` is set).

// Test helpers are shared between the modules of this one test binary.
#![allow(unreachable_pub)]

mod auth;
#[path = "../common/cairn_serve.rs"]
mod cairn_serve;
mod claim_next;
mod cli;
mod concurrency;
mod coordination;
#[path = "../common/database.rs"]
mod database;
mod evidence;
mod flows;
mod items_cli;
mod leases;
mod malformed;
mod pagination;
mod previews;
#[path = "../common/raw_stdio.rs"]
mod raw_stdio;
#[path = "../common/stdio_faults.rs"]
mod stdio_faults;
mod support;
#[path = "../common/tool_call.rs"]
mod tool_call;
