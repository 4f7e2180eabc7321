//! `cairn setup <host>` (also `deepwork setup <host>`): writes cairn's MCP servers into the settings of a host —
//! Claude Code (the cairn plugin from its marketplace, and permissions for its tools), Codex CLI, Gemini CLI and
//! Cursor — merged into what the file already holds. It prints what it changes; a second run changes nothing and
//! says so; `--dry-run` prints without writing; a file that does not parse is refused and left as it is.
//!
//! The servers: deepwork (`deepwork serve --platform <host>`) and roscoe (`roscoe mcp`) over stdio, by the names
//! `cargo install` puts on `PATH`; and, with `--url`, the work surface (the `/mcp` endpoint of a `cairn serve`) with
//! the bearer token read from the environment variable `--token-env` names (never written into a file).

mod claude;
mod codex;
mod cursor;
mod edit;
mod gemini;
mod json_settings;
mod toml_settings;

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::ValueEnum;

pub use edit::Edit;

/// The hosts `setup` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Host {
    /// Claude Code: `~/.claude/settings.json` (marketplace, plugin, permissions).
    Claude,
    /// Codex CLI: `~/.codex/config.toml`.
    Codex,
    /// Gemini CLI: `~/.gemini/settings.json`.
    Gemini,
    /// Cursor: `.cursor/mcp.json` in the project.
    Cursor,
}

/// `setup` options.
#[derive(Debug, clap::Args)]
pub struct SetupArgs {
    /// The host whose settings to write.
    #[arg(value_enum)]
    pub host: Host,
    /// Print what would change; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Also the work surface: the `cairn serve` at this URL (`http://127.0.0.1:7777`; `/mcp` is added).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// With `--url`: the environment variable holding the work token (default `CAIRN_TOKEN`).
    #[arg(long, value_name = "NAME", requires = "url")]
    pub token_env: Option<String>,
    /// Claude Code: the cairn marketplace, a cairn checkout (a directory) or `OWNER/REPO` on GitHub (default: the
    /// current directory, when it is a cairn checkout).
    #[arg(long, value_name = "DIR|OWNER/REPO")]
    pub marketplace: Option<String>,
    /// Cursor: the project whose `.cursor/mcp.json` to write (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

/// The work surface's endpoint and where its token comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Work {
    /// The `/mcp` URL.
    pub url: String,
    /// The environment variable holding the bearer token.
    pub token_env: String,
}

/// Runs `setup`: plans the edit, prints it and (unless `--dry-run`) writes it.
pub fn run(args: SetupArgs) -> anyhow::Result<()> {
    let work = work(&args)?;
    let edit = match args.host {
        Host::Claude => claude::plan(&home()?, &marketplace(args.marketplace.as_deref())?, work.as_ref())?,
        Host::Codex => codex::plan(&home()?, work.as_ref())?,
        Host::Gemini => gemini::plan(&home()?, work.as_ref())?,
        Host::Cursor => cursor::plan(&project(args.project)?, work.as_ref())?,
    };
    print!("{}", edit.report(args.dry_run));
    if !args.dry_run {
        edit.write()?;
    }
    Ok(())
}

/// The work surface `--url` and `--token-env` ask for, checked.
fn work(args: &SetupArgs) -> anyhow::Result<Option<Work>> {
    let Some(url) = args.url.as_deref() else { return Ok(None) };
    let url = url.trim_end_matches('/');
    if !(url.starts_with("http://") || url.starts_with("https://")) || url.contains(char::is_whitespace) {
        anyhow::bail!("--url {url:?} is not an http(s) URL; give the address of a `cairn serve`, e.g. http://127.0.0.1:7777");
    }
    let url = if url.ends_with("/mcp") { url.to_owned() } else { format!("{url}/mcp") };
    let token_env = args.token_env.clone().unwrap_or_else(|| "CAIRN_TOKEN".to_owned());
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if token_env.is_empty() || !token_env.chars().all(valid) || token_env.starts_with(|c: char| c.is_ascii_digit()) {
        anyhow::bail!("--token-env {token_env:?} is not an environment variable name (letters, digits and _, e.g. CAIRN_TOKEN)");
    }
    Ok(Some(Work { url, token_env }))
}

/// The user's home directory (`HOME`).
fn home() -> anyhow::Result<PathBuf> {
    std::env::home_dir().filter(|h| h.is_absolute()).context("no home directory: set HOME to the folder that holds the host's settings")
}

/// The Cursor project: `--project`, else the current directory.
fn project(project: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let dir = match project {
        Some(dir) => dir,
        None => std::env::current_dir().context("the current directory is not accessible")?,
    };
    dir.canonicalize().with_context(|| format!("--project {}: no such directory", dir.display()))
}

/// Where Claude Code finds the cairn marketplace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Marketplace {
    /// A cairn checkout on this machine (absolute).
    Directory(PathBuf),
    /// `OWNER/REPO` on GitHub.
    GitHub(String),
}

/// The marketplace `--marketplace` names (default: the current directory), checked.
fn marketplace(given: Option<&str>) -> anyhow::Result<Marketplace> {
    let holds_marketplace = |dir: &Path| dir.join(".claude-plugin/marketplace.json").is_file();
    match given {
        None => {
            let here = std::env::current_dir().context("the current directory is not accessible")?;
            anyhow::ensure!(
                holds_marketplace(&here),
                "Claude Code needs the cairn marketplace: run setup in a cairn checkout, or pass --marketplace DIR (a \
                 cairn checkout) or --marketplace OWNER/REPO (on GitHub)"
            );
            Ok(Marketplace::Directory(here.canonicalize()?))
        }
        Some(source) if Path::new(source).is_dir() => {
            let dir = Path::new(source).canonicalize()?;
            anyhow::ensure!(
                holds_marketplace(&dir),
                "--marketplace {}: no .claude-plugin/marketplace.json there; give a cairn checkout or OWNER/REPO",
                dir.display()
            );
            Ok(Marketplace::Directory(dir))
        }
        Some(source) => {
            let parts: Vec<&str> = source.split('/').collect();
            let name = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
            anyhow::ensure!(
                parts.len() == 2 && parts.iter().all(|p| name(p)),
                "--marketplace {source:?} is neither a directory nor OWNER/REPO; give a cairn checkout or a GitHub repository"
            );
            Ok(Marketplace::GitHub(source.to_owned()))
        }
    }
}

/// The stdio servers for `platform`: name, command and arguments.
fn stdio_servers(platform: &str) -> [(&'static str, &'static str, Vec<&str>); 2] {
    [("deepwork", "deepwork", vec!["serve", "--platform", platform]), ("roscoe", "roscoe", vec!["mcp"])]
}

/// The `mcpServers` object Gemini CLI and Cursor share: the stdio servers for `platform` and, when given, the work
/// server as `(work, the key its URL goes under, the Authorization header)`. Keys of the other kind of server
/// (a URL on a stdio server, a command on an HTTP one) are removed.
fn json_mcp_servers(
    settings: &mut json_settings::JsonSettings,
    platform: &str,
    work: Option<(&Work, &str, &str)>,
) -> anyhow::Result<()> {
    for (name, command, args) in stdio_servers(platform) {
        settings.set(&["mcpServers", name, "command"], serde_json::json!(command))?;
        settings.set(&["mcpServers", name, "args"], serde_json::json!(args))?;
        for key in ["url", "httpUrl"] {
            settings.remove(&["mcpServers", name, key])?;
        }
    }
    if let Some((work, url_key, authorization)) = work {
        settings.set(&["mcpServers", "work", url_key], serde_json::json!(work.url))?;
        settings.set(&["mcpServers", "work", "headers", "Authorization"], serde_json::json!(authorization))?;
        for key in ["command", "args", "url", "httpUrl"].into_iter().filter(|k| k != &url_key) {
            settings.remove(&["mcpServers", "work", key])?;
        }
    }
    Ok(())
}
