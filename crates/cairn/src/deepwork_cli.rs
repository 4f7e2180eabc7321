//! The `deepwork` command tree: `serve` (the MCP server, DeepWork's options), `review` (review instructions for the
//! changed files, from `.deepreview` rules only), `jobs get-stack`, and `hook <name>` (the agent hooks of
//! `cairn_deepwork::hooks`). Each command is self-contained: no `bash`, `jq` or Python needed (spec §17 #245).

use std::io::{IsTerminal, Read};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use cairn_deepwork::changed_files::{changed_files, reference_root};
use cairn_deepwork::deepreview::DeepreviewCache;
use cairn_deepwork::discovery::split_folder_list;
use cairn_deepwork::hooks::{self, Hook, HookPlatform};
use cairn_deepwork::review::{build_tasks, format_tasks, root_relative, write_instruction_files};
use cairn_deepwork::service::prepare_tmp_dir;
use cairn_deepwork::{Config, Deepwork, DeepworkServer, HostNames, RootSource, standard_jobs};
use cairn_mcp::{HttpOptions, Server};
use clap::{Parser, Subcommand, ValueEnum};

use crate::home::cairn_home;

/// The `deepwork` program (the same as `cairn deepwork`).
#[derive(Debug, Parser)]
#[command(name = "deepwork", version, about = "DeepWork-compatible workflow server (cairn)")]
pub struct DeepworkCli {
    /// What to do.
    #[command(subcommand)]
    pub command: DeepworkCommand,
}

/// deepwork commands.
#[derive(Debug, Subcommand)]
pub enum DeepworkCommand {
    /// Serve the workflow tools over MCP.
    Serve(ServeArgs),
    /// Write review instructions for the changed files (`.deepreview` rules only) and print the list of reviews.
    ///
    /// Files come from `--files`, else from standard input (one per line) when it is not a terminal, else from git
    /// (changed on this branch, plus staged and untracked files).
    Review(ReviewArgs),
    /// Run an agent hook: reads the hook event JSON on standard input and prints the hook's JSON answer.
    Hook {
        /// The hook: `deepschema_write`, `post_commit_reminder` or `startup_context`.
        name: String,
        /// How the host names what the hook's texts point at.
        #[command(flatten)]
        host: HostArgs,
    },
    /// Write cairn's MCP servers into a host's settings (the same as `cairn setup`).
    Setup(crate::setup::SetupArgs),
    /// Job and session commands.
    Jobs {
        /// The jobs command.
        #[command(subcommand)]
        command: JobsCommand,
    },
}

/// `deepwork jobs` commands.
#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// Print the active workflow sessions of a project as JSON (used to resume after context compaction).
    GetStack {
        /// Project root (default: current directory).
        #[arg(long)]
        path: Option<PathBuf>,
    },
}

/// How the host names the tools, the reviewer agent and the commands that cairn's texts point the model at.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HostArgs {
    /// The Claude Code plugin that started cairn (its names: tools `mcp__plugin_<NAME>_deepwork__…`, reviewer agent
    /// `<NAME>:reviewer`, commands `/<NAME>:…`). Without it: a plain `.mcp.json` server named `deepwork`
    /// (`mcp__deepwork__…`, reviews in `general-purpose`, no commands).
    #[arg(long, value_name = "NAME")]
    pub plugin: Option<String>,
    /// The prefix the host puts before the deepwork tools' names, when it is not the one `--plugin` implies (for
    /// example `mcp__dw__` for a `.mcp.json` server named `dw`).
    #[arg(long, value_name = "PREFIX")]
    pub tool_prefix: Option<String>,
}

impl HostArgs {
    fn names(&self) -> HostNames {
        HostNames::new(self.plugin.as_deref(), self.tool_prefix.as_deref())
    }
}

/// `deepwork review` options.
#[derive(Debug, clap::Args)]
pub struct ReviewArgs {
    /// Platform the instructions are for: `claude` gets the Claude Code task list, other platforms a plain list.
    #[arg(long = "instructions-for", value_name = "PLATFORM")]
    pub instructions_for: String,
    /// Git ref to compare against instead of the default branch (still from the merge-base; git source only).
    #[arg(long, value_name = "REF")]
    pub base_ref: Option<String>,
    /// Project root (default: current directory).
    #[arg(long)]
    pub path: Option<PathBuf>,
    /// Files to review, relative to the project root (repeatable; skips git and standard input).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub files: Vec<String>,
    /// How the host names the reviewer agent.
    #[command(flatten)]
    pub host: HostArgs,
}

/// Transports `deepwork serve` speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    /// JSON-RPC over stdin/stdout.
    Stdio,
    /// Streamable HTTP at `/mcp`.
    Http,
    /// The legacy HTTP+SSE protocol (`GET /sse`, `POST /messages/`).
    Sse,
}

/// `deepwork serve` options.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Project root (default: the client's workspace root, else the current directory).
    #[arg(long)]
    pub path: Option<PathBuf>,
    /// How to talk to the client.
    #[arg(long, value_enum, default_value_t = Transport::Stdio)]
    pub transport: Transport,
    /// Port for the HTTP and SSE transports.
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Platform name (e.g. `claude`); sessions are kept per platform.
    #[arg(long)]
    pub platform: Option<String>,
    /// How the host names what cairn's texts point at.
    #[command(flatten)]
    pub host: HostArgs,
    /// Accepted for compatibility; has no effect.
    #[arg(long, hide = true)]
    pub no_quality_gate: bool,
    /// Accepted for compatibility; has no effect.
    #[arg(long, hide = true)]
    pub external_runner: Option<String>,
}

/// Runs a deepwork command.
pub async fn run(command: DeepworkCommand) -> anyhow::Result<()> {
    match command {
        DeepworkCommand::Serve(args) => serve(args).await,
        DeepworkCommand::Review(args) => review(args),
        DeepworkCommand::Hook { name, host } => hook(&name, &host),
        DeepworkCommand::Jobs { command: JobsCommand::GetStack { path } } => get_stack(path),
        DeepworkCommand::Setup(args) => crate::setup::run(args),
    }
}

/// The DeepWork service with cairn's standard jobs and schemas and the folders from the environment, its texts naming
/// things as `names` says the host does.
pub(crate) fn service(platform: Option<String>, names: HostNames) -> anyhow::Result<Deepwork> {
    let home = cairn_home();
    let standard_jobs = standard_jobs::materialize(&home)
        .with_context(|| format!("could not write cairn's standard jobs under {}", home.display()))?;
    let standard_schemas = standard_jobs::materialize_schemas(&home)
        .with_context(|| format!("could not write cairn's standard schemas under {}", home.display()))?;
    let folders = |var: &str| std::env::var(var).map(|v| split_folder_list(&v)).unwrap_or_default();
    Ok(Deepwork::new(Config {
        platform: platform.filter(|p| !p.is_empty()).unwrap_or_else(|| "claude".into()),
        standard_jobs,
        additional_job_folders: folders("DEEPWORK_ADDITIONAL_JOBS_FOLDERS"),
        standard_schemas,
        additional_schema_folders: folders("DEEPWORK_ADDITIONAL_SCHEMAS_FOLDERS"),
        names,
    }))
}

/// The project root `path` names (default: the current directory), canonical; an error naming a missing folder.
pub(crate) fn project_dir(path: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let dir = match path {
        Some(path) => path,
        None => std::env::current_dir().context("the current directory is not accessible")?,
    };
    if !dir.is_dir() {
        anyhow::bail!("Directory '{}' does not exist or is not a directory.", dir.display());
    }
    dir.canonicalize().with_context(|| format!("cannot resolve {}", dir.display()))
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let roots = match args.path {
        Some(path) => RootSource::Fixed(project_dir(Some(path))?),
        None => RootSource::ClientRoots { fallback: project_dir(None)? },
    };
    let server = DeepworkServer::new(service(args.platform, args.host.names())?, roots);
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    match args.transport {
        Transport::Stdio => cairn_mcp::serve_stdio(Server::new(server)).await?,
        Transport::Http => {
            let options = HttpOptions { addr, path: "/mcp".into(), extra_allowed_hosts: Vec::new() };
            cairn_mcp::serve_http(Arc::new(move || Server::new(server.clone())), options).await?;
        }
        Transport::Sse => cairn_mcp::serve_legacy_sse(Arc::new(move || Server::new(server.clone())), addr).await?,
    }
    Ok(())
}

fn get_stack(path: Option<PathBuf>) -> anyhow::Result<()> {
    let root = project_dir(path)?;
    let sessions = service(None, HostNames::default())?.active_sessions(&root);
    let out = serde_json::json!({ "active_sessions": sessions });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

fn review(args: ReviewArgs) -> anyhow::Result<()> {
    let root = project_dir(args.path)?;
    let rules = DeepreviewCache::default().load(&root);
    for (path, error) in &rules.errors {
        eprintln!("Warning: {}: {error}", path.display());
    }
    if rules.rules.is_empty() {
        println!("No .deepreview configuration files found.");
        return Ok(());
    }
    let files = match listed_files(&root, args.files) {
        Some(files) => files,
        None => changed_files(&root, args.base_ref.as_deref()).map_err(anyhow::Error::msg)?,
    };
    if files.is_empty() {
        println!("No changed files detected.");
        return Ok(());
    }
    let platform = args.instructions_for.as_str();
    let tasks = build_tasks(&rules.rules, &files, &root, platform, false);
    if tasks.is_empty() {
        println!("No review rules matched the changed files.");
        return Ok(());
    }
    prepare_tmp_dir(&root);
    let pending = write_instruction_files(&root, tasks)
        .map_err(|err| anyhow::anyhow!("could not write the review instruction files: {err}"))?;
    let agent = args.host.names();
    println!("{}", format_tasks(&pending, platform, agent.reviewer_agent(), &root, &reference_root(&root)));
    Ok(())
}

/// The files named by `--files`, else by standard input when it is not a terminal (one per line, blank lines
/// skipped); `None` when neither names any. Paths become relative to `root` (a leading `./` dropped, an absolute path
/// inside `root` made relative), sorted and de-duplicated.
fn listed_files(root: &Path, files: Vec<String>) -> Option<Vec<String>> {
    let mut files = files;
    if files.is_empty() && !std::io::stdin().is_terminal() {
        let mut text = String::new();
        // Unreadable input names no files.
        let _ = std::io::stdin().read_to_string(&mut text);
        files = text.lines().map(str::to_owned).collect();
    }
    let mut files: Vec<String> =
        files.iter().map(|f| f.trim()).filter(|f| !f.is_empty()).map(|f| root_relative(root, f)).collect();
    if files.is_empty() {
        return None;
    }
    files.sort();
    files.dedup();
    Some(files)
}

fn hook(name: &str, host: &HostArgs) -> anyhow::Result<()> {
    let Some(hook) = Hook::from_name(name) else { anyhow::bail!(Hook::not_found(name)) };
    let mut input = String::new();
    if !std::io::stdin().is_terminal() {
        // Unreadable input is an empty event.
        let _ = std::io::stdin().read_to_string(&mut input);
    }
    let platform = HookPlatform::from_setting(std::env::var("DEEPWORK_HOOK_PLATFORM").ok().as_deref());
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let output = match service(None, host.names()) {
        Ok(service) => service.run_hook(hook, &input, platform, &cwd),
        // The session id matters more than the workflows: it is given all the same.
        Err(err) if hook == Hook::StartupContext => hooks::startup_context_without_service(&input, &format!("{err:#}")),
        Err(err) => hooks::error_output(hook.name(), &format!("{err:#}")),
    };
    println!("{output}");
    Ok(())
}
