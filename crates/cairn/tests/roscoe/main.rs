//! End-to-end tests of `cairn roscoe mcp` (and the `roscoe mcp` entry name): the real binary, driven by rmcp's
//! client over stdio, with a private `CAIRN_HOME`, a fresh database (SQLite, or Postgres when
//! `CAIRN_TEST_POSTGRES_URL` is set) and git isolated from the machine.

// Test helpers are shared between the modules of this one test binary.
#![allow(unreachable_pub)]

#[path = "../common/anthropic.rs"]
mod anthropic;
mod authoring;
mod broken_files;
mod cli_ai;
mod cli_commands;
mod cli_live_output;
mod cli_names;
mod cli_run;
mod cli_schedules;
mod cli_script_output;
mod cli_support;
mod cli_terminal;
#[path = "../common/cairn_serve.rs"]
mod cairn_serve;
#[path = "../common/database.rs"]
mod database;
mod docs;
mod hostile_input;
mod http_scope;
mod duplicate_keys;
mod elicitation;
mod engine_bounds;
mod isolation;
mod malformed;
mod project_config;
mod progress;
mod protocol;
#[path = "../common/raw_stdio.rs"]
mod raw_stdio;
mod runs_concurrency;
mod runs_containment;
mod runs_crash;
mod runs_fanout;
mod runs_fork;
mod runs_lifecycle;
mod runs_subworkflow;
mod runs_support;
mod runs_test_workflow;
mod schema;
mod script_values;
mod skills;
#[path = "../common/stdio_faults.rs"]
mod stdio_faults;
mod support;
#[path = "../common/tool_call.rs"]
mod tool_call;
mod tool_groups;
mod yaml_words;
