//! cairn in the hosts people use: tool schemas every host and model API accepts (`schemas`, with the OpenAI
//! strict-mode and Gemini subsets in `openai_strict` and `gemini`, checked by `subset`), and `cairn setup <host>` for Claude Code, Codex
//! CLI, Gemini CLI and Cursor on temporary home folders (`setup_*`), Claude Code's checked with the real CLI.

// Test helpers are shared between the modules of this one test binary.
#![allow(unreachable_pub)]

#[path = "../common/anthropic.rs"]
mod anthropic;
#[path = "../common/claude_code.rs"]
mod claude_code;
mod context_budget;
mod gemini;
mod host_arguments;
mod openai_strict;
#[path = "../common/raw_stdio.rs"]
mod raw_stdio;
mod schemas;
mod setup_claude;
mod setup_codex;
mod setup_gemini_cursor;
mod setup_run;
mod subset;
