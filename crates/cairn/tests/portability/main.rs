//! cairn in the hosts people use, beyond Claude Code's plugin: tool schemas every host and model API accepts
//! (`schemas`, with the OpenAI strict-mode and Gemini subsets in `openai_strict` and `gemini`).

// Test helpers are shared between the modules of this one test binary.
#![allow(unreachable_pub)]

mod gemini;
mod openai_strict;
#[path = "../common/raw_stdio.rs"]
mod raw_stdio;
mod schemas;
