//! End-to-end tests of the server's own model calls (issue 18): the real `cairn serve` with its providers pointed at
//! stand-ins started by the tests — the Anthropic Messages API (`common/anthropic.rs`), an OpenAI-compatible server
//! (`common/openai.rs`) and, when CI installed it, the real `claude` CLI against the Anthropic stand-in — driven over
//! the REST API and MCP.

#![allow(unreachable_pub)]

#[path = "../common/anthropic.rs"]
mod anthropic;
mod browser;
mod budgets;
#[path = "../common/cairn_serve.rs"]
mod cairn_serve;
mod cancel;
mod claude_cli;
#[path = "../common/database.rs"]
mod database;
#[path = "../common/openai.rs"]
mod openai;
mod retries;
mod server_runs;
mod support;
mod test_workflow_live;
