//! The stdio servers `setup` writes for Codex CLI, Gemini CLI and Cursor: deepwork (`serve --platform <host>`) and
//! roscoe (`mcp`, with `--tools` when asked), each started by the absolute path of the `deepwork` / `roscoe` program
//! next to the running one (or the running program itself with `deepwork` / `roscoe` in front of the arguments), or
//! by name with `--command-name`; the cairn variables set when setup runs (`CAIRN_HOME`, `CAIRN_DATABASE_URL`), to be
//! passed through in the host's way; and a check that each command starts (`--version`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;

/// The variables the servers read for where cairn keeps its state.
pub(crate) const PASSED_THROUGH: [&str; 2] = ["CAIRN_HOME", "CAIRN_DATABASE_URL"];

/// One stdio server as a host's settings hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Server {
    /// Its name in the host (`deepwork`, `roscoe`).
    pub name: &'static str,
    /// The program: an absolute path, or a name the host finds on `PATH`.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
}

/// How `setup` names the programs and what roscoe offers.
#[derive(Debug, Clone, Default)]
pub(crate) struct Programs {
    /// `--command-name`: write `deepwork` / `roscoe` by name.
    pub by_name: bool,
    /// `--roscoe-tools`: the tool groups `roscoe mcp --tools` gets.
    pub roscoe_tools: Option<String>,
}

impl Programs {
    /// The two stdio servers for `platform`, deepwork's tools named with `tool_prefix` when the host shows them so.
    pub(crate) fn servers(&self, platform: &str, tool_prefix: Option<&str>) -> anyhow::Result<[Server; 2]> {
        let mut deepwork_args = vec!["serve".to_owned(), "--platform".to_owned(), platform.to_owned()];
        if let Some(prefix) = tool_prefix {
            deepwork_args.extend(["--tool-prefix".to_owned(), prefix.to_owned()]);
        }
        let mut roscoe_args = vec!["mcp".to_owned()];
        if let Some(groups) = &self.roscoe_tools {
            roscoe_args.extend(["--tools".to_owned(), groups.clone()]);
        }
        Ok([self.server("deepwork", deepwork_args)?, self.server("roscoe", roscoe_args)?])
    }

    fn server(&self, name: &'static str, args: Vec<String>) -> anyhow::Result<Server> {
        if self.by_name {
            return Ok(Server { name, command: name.to_owned(), args });
        }
        let running = std::env::current_exe().context("the running program's path is not known; pass --command-name")?;
        let entry = running.with_file_name(format!("{name}{}", std::env::consts::EXE_SUFFIX));
        if entry.is_file() {
            return Ok(Server { name, command: path_text(&entry)?, args });
        }
        // `cairn deepwork …` and `cairn roscoe …` are the same commands as the entry programs.
        let args = std::iter::once(name.to_owned()).chain(args).collect();
        Ok(Server { name, command: path_text(&running)?, args })
    }
}

fn path_text(path: &Path) -> anyhow::Result<String> {
    let path: PathBuf = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    path.to_str().map(str::to_owned).with_context(|| format!("{} is not UTF-8; pass --command-name", path.display()))
}

/// The cairn variables set now, which the servers should see too: `(name, value)`.
pub(crate) fn set_variables() -> Vec<(&'static str, String)> {
    PASSED_THROUGH.iter().filter_map(|name| Some((*name, std::env::var(name).ok().filter(|v| !v.is_empty())?))).collect()
}

/// Whether `server` starts: its first line for `--version`, or what went wrong and what to do.
pub(crate) fn check(server: &Server) -> String {
    let output = Command::new(&server.command).arg("--version").stdin(Stdio::null()).stderr(Stdio::null()).output();
    match output {
        Ok(out) if out.status.success() => {
            let version = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or_default().trim().to_owned();
            format!("  ok: {} starts ({version})\n", server.command)
        }
        Ok(out) => format!(
            "  warning: `{} --version` failed ({}); the host will start without the {} tools\n",
            server.command, out.status, server.name
        ),
        Err(error) => format!(
            "  warning: `{}` does not start ({error}); the host will start without the {} tools: put it on PATH \
             (`cargo install --path crates/cairn`) or run setup without --command-name\n",
            server.command, server.name
        ),
    }
}
