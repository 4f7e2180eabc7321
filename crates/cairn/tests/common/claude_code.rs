//! Running the real Claude Code CLI in a test (the hosts tests and `cairn setup claude`'s): `claude …` offline against
//! the Anthropic stand-in (`anthropic.rs`), in a private `HOME`, with this build's `cairn`, `deepwork` and `roscoe`
//! first on `PATH` (so a plugin's or `.mcp.json`'s servers are the binaries under test).
//!
//! `.ci/claude-code.sh` installs Claude Code (and the Node.js it needs) under `target/claude-code`; a developer machine
//! without it skips these tests with a note, but in CI (`CI=true`) a missing install fails them.

#![allow(dead_code, reason = "each test binary that includes this file uses part of it")]

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

/// Where `.ci/claude-code.sh` installs Claude Code.
fn install_dir() -> PathBuf {
    std::env::var("CLAUDE_CODE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/claude-code"))
}

/// The repository's Claude Code plugin.
pub fn plugin_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins/claude").canonicalize().unwrap()
}

/// The installed Claude Code CLI.
#[derive(Debug, Clone)]
pub struct ClaudeCode {
    bin: PathBuf,
    node_bin: PathBuf,
}

impl ClaudeCode {
    /// The installed CLI, or `None` (with a note) where it is not installed and this is not CI.
    pub fn find() -> Option<ClaudeCode> {
        let node_bin = install_dir().join("node_modules/.bin");
        let bin = node_bin.join("claude");
        if bin.is_file() {
            return Some(ClaudeCode { bin, node_bin });
        }
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CI must install Claude Code: bash .ci/claude-code.sh");
        eprintln!("skipped: Claude Code is not installed in {} (bash .ci/claude-code.sh)", install_dir().display());
        None
    }

    /// `claude` with `args` in `project`, with `HOME` at `home`, the model at `model_base` and extra environment
    /// `env`: its output, within five minutes. Permissions are as `home`'s settings say.
    pub async fn output(&self, project: &Path, home: &Path, model_base: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
        let binaries = Path::new(env!("CARGO_BIN_EXE_cairn")).parent().unwrap();
        let path = format!("{}:{}:{}", binaries.display(), self.node_bin.display(), std::env::var("PATH").unwrap_or_default());
        let mut command = tokio::process::Command::new(&self.bin);
        command
            .current_dir(project)
            .args(args)
            .env_clear()
            .env("PATH", path)
            .env("HOME", home)
            .env("ANTHROPIC_BASE_URL", model_base)
            .env("ANTHROPIC_API_KEY", "stand-in-key")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CAIRN_HOME", home.join("cairn"))
            .kill_on_drop(true);
        for (name, value) in env {
            command.env(name, value);
        }
        tokio::time::timeout(std::time::Duration::from_secs(300), command.output())
            .await
            .expect("claude finishes within five minutes")
            .unwrap()
    }

    /// `claude -p prompt --output-format json` plus `args`, permissions skipped, in `project`, with `HOME` at `home`,
    /// the model at `model_base` and extra environment `env`; its JSON result.
    pub async fn run(&self, project: &Path, home: &Path, model_base: &str, prompt: &str, args: &[&str], env: &[(&str, &str)]) -> Value {
        let args = [&["-p", prompt, "--output-format", "json", "--dangerously-skip-permissions"][..], args].concat();
        let env = [&[("IS_SANDBOX", "1")][..], env].concat();
        let output = self.output(project, home, model_base, &args, &env).await;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let result: Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|_| panic!("claude printed no JSON result:\n{stdout}\n{stderr}"));
        assert_eq!(result["is_error"], false, "claude failed: {result}\n{stderr}");
        result
    }
}
