//! `cairn setup <host>` (also `deepwork setup <host>`): writes cairn's MCP servers into the settings of a host —
//! Claude Code (the cairn plugin from its marketplace, and permissions for its tools), Codex CLI, Gemini CLI and
//! Cursor — merged into what the file already holds. It prints what it changes; a second run changes nothing and
//! says so; `--dry-run` prints without writing; a file that does not parse is refused and left as it is.
//!
//! The servers: deepwork (`deepwork serve --platform <host>`) and roscoe (`roscoe mcp`) over stdio, by the absolute
//! path of the programs next to the running one (`servers.rs`; by name with `--command-name`), each checked to start;
//! and, with `--url`, the work surface (the `/mcp` endpoint of a `cairn serve`) with the bearer token read from the
//! environment variable `--token-env` names (never written into a file). It ends with what the user still has to do.

mod claude;
mod codex;
mod cursor;
mod edit;
mod gemini;
mod json_settings;
mod servers;
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
    /// Cursor: the project whose `.cursor/mcp.json` to write; Gemini CLI with `--trust`: the folder to trust (default:
    /// the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Gemini CLI: also trust the project folder in `~/.gemini/trustedFolders.json` (Gemini CLI starts no MCP servers
    /// in a folder it does not trust).
    #[arg(long)]
    pub trust: bool,
    /// Write the commands by name (`deepwork`, `roscoe`, found on the host's `PATH`) instead of the absolute paths of
    /// the programs next to this one.
    #[arg(long)]
    pub command_name: bool,
    /// The roscoe tool groups to offer (`roscoe mcp --tools`): runs, authoring, skills, docs or all, comma-separated.
    #[arg(long, value_name = "GROUPS")]
    pub roscoe_tools: Option<String>,
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
    if let Some(groups) = &args.roscoe_tools {
        cairn_roscoe::ToolGroups::parse(groups).map_err(|e| anyhow::anyhow!("--roscoe-tools: {e}"))?;
        let claude = args.host == Host::Claude;
        anyhow::ensure!(!claude, "--roscoe-tools: Claude Code has tool search and starts the plugin's servers");
    }
    anyhow::ensure!(!args.trust || args.host == Host::Gemini, "--trust is for Gemini CLI's trusted folders");
    let programs = servers::Programs { by_name: args.command_name, roscoe_tools: args.roscoe_tools.clone() };
    let (edits, servers) = match args.host {
        Host::Claude => (vec![claude::plan(&home()?, &marketplace(args.marketplace.as_deref())?, work.as_ref())?], None),
        Host::Codex => {
            let servers = programs.servers("codex", None)?;
            (vec![codex::plan(&home()?, &servers, work.as_ref())?], Some(servers))
        }
        Host::Gemini => {
            let servers = programs.servers("gemini", Some("mcp_deepwork_"))?;
            let mut edits = vec![gemini::plan(&home()?, &servers, work.as_ref())?];
            if args.trust {
                edits.push(gemini::trust(&home()?, &project(args.project)?)?);
            }
            (edits, Some(servers))
        }
        Host::Cursor => {
            let servers = programs.servers("cursor", None)?;
            (vec![cursor::plan(&project(args.project)?, &servers, work.as_ref())?], Some(servers))
        }
    };
    edits.iter().for_each(|edit| print!("{}", edit.report(args.dry_run)));
    if !args.dry_run {
        edits.iter().try_for_each(Edit::write)?;
    }
    if let Some(servers) = &servers {
        servers.iter().for_each(|server| print!("{}", servers::check(server)));
    }
    print!("{}", still_to_do(args.host, work.as_ref(), args.trust));
    Ok(())
}

/// What the user still has to do for `host` once its settings are written.
fn still_to_do(host: Host, work: Option<&Work>, trusted: bool) -> String {
    let mut steps = Vec::new();
    if let Some(work) = work {
        steps.push(format!("export {} (a token from `cairn work token create`) where the host starts", work.token_env));
    }
    match host {
        Host::Claude => steps.push("start a new Claude Code session: it installs the cairn plugin".to_owned()),
        Host::Codex => steps.push(format!(
            "start Codex where {} are set as you want them, if at all (it hands them on to the servers)",
            servers::PASSED_THROUGH.join(" and ")
        )),
        Host::Gemini => {
            if !trusted {
                steps.push(
                    "trust the project folder: `cairn setup gemini --trust` in it, or answer Gemini CLI's question on \
                     first start (it starts no MCP servers in a folder it does not trust)"
                        .to_owned(),
                );
            }
            steps.push(
                "Gemini CLI hides variables named like *KEY*, *TOKEN* or *SECRET* from the servers it starts: for \
                 steps roscoe runs itself, name the key's file as providers.<name>.apiKeyFile in \
                 $CAIRN_HOME/roscoe.yaml"
                    .to_owned(),
            );
        }
        Host::Cursor => steps.push("reload Cursor's MCP servers (Settings → MCP) or reopen the project".to_owned()),
    }
    let set: Vec<&str> = servers::PASSED_THROUGH.iter().copied().filter(|v| std::env::var_os(v).is_some()).collect();
    if matches!(host, Host::Gemini | Host::Cursor) && !set.is_empty() {
        let set = set.join(" and ");
        steps.push(format!("start the host where {set} is set: its settings hand it on to the servers"));
    }
    let mut out = "Still to do:\n".to_owned();
    for step in steps {
        out.push_str(&format!("  - {step}\n"));
    }
    out
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

/// The project (Cursor's, or the folder Gemini CLI is to trust): `--project`, else the current directory.
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

/// The marketplace `--marketplace` names (default: the cairn checkout the current directory is in), checked.
fn marketplace(given: Option<&str>) -> anyhow::Result<Marketplace> {
    let holds_marketplace = |dir: &Path| dir.join(".claude-plugin/marketplace.json").is_file();
    match given {
        None => {
            let here = std::env::current_dir().context("the current directory is not accessible")?.canonicalize()?;
            let checkout = here.ancestors().find(|dir| holds_marketplace(dir));
            let checkout = checkout.with_context(|| {
                "Claude Code needs the cairn marketplace: run setup in a cairn checkout (or a folder inside one), or \
                 pass --marketplace DIR (a cairn checkout) or --marketplace OWNER/REPO (on GitHub)"
            })?;
            Ok(Marketplace::Directory(checkout.to_path_buf()))
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

/// The `mcpServers` object Gemini CLI and Cursor share: the stdio `servers`, each with an `env` entry per cairn
/// variable set now written as `reference` makes it (the host's way of naming a variable of its own environment),
/// and, when given, the work server as `(work, the key its URL goes under, the Authorization header)`. Keys of the
/// other kind of server (a URL on a stdio server, a command on an HTTP one) are removed.
fn json_mcp_servers(
    settings: &mut json_settings::JsonSettings,
    servers: &[servers::Server],
    reference: fn(&str) -> String,
    work: Option<(&Work, &str, &str)>,
) -> anyhow::Result<()> {
    for server in servers {
        let name = server.name;
        settings.set(&["mcpServers", name, "command"], serde_json::json!(server.command))?;
        settings.set(&["mcpServers", name, "args"], serde_json::json!(server.args))?;
        for (variable, _) in servers::set_variables() {
            settings.set(&["mcpServers", name, "env", variable], serde_json::json!(reference(variable)))?;
        }
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
