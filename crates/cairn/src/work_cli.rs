//! `cairn work …`: the work surface from the command line. `mcp` serves the work and decisions tools over stdio for
//! one local user (or the holder of `CAIRN_TOKEN`); `account` and `token` manage who may use the HTTP endpoint.
//! Results are printed as one JSON object on stdout, or with `--quiet` / `--format id` only the id of what was made
//! or listed (one a line), so `ACC=$(cairn work account create --name Team -q)` works; a token's secret is printed
//! once (`--format token` prints only it) and only its hash is kept. `items …` and `evidence …` work on items and
//! record evidence, locally or against a server's REST API ([`crate::work_items_cli`]).

use anyhow::{Context, bail};
use cairn_store::Store;
use cairn_store::work::accounts::AccountRow;
use cairn_work::{Kind, Scope, Service, WorkServer};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::home::cairn_home;
use crate::work_items_cli::{self, Actor, EXIT_CODES, EvidenceCommand, ItemsCommand};
use crate::work_options::{Format, KindArg, Output, caller, show};

/// `cairn work` options and command.
#[derive(Debug, Args)]
pub struct WorkArgs {
    /// Database URL (`sqlite://PATH` or `postgres://…`). Default: the SQLite file `$CAIRN_HOME/cairn.db`.
    #[arg(long, env = "CAIRN_DATABASE_URL", value_name = "URL", global = true)]
    pub database_url: Option<String>,
    /// What to do.
    #[command(subcommand)]
    pub command: WorkCommand,
}

/// work commands.
#[derive(Debug, Subcommand)]
pub enum WorkCommand {
    /// Serve the work and decisions tools over MCP on stdin/stdout. Without `CAIRN_TOKEN` the caller is the local
    /// user (account `acc_local`, every scope) acting as `--as`.
    Mcp {
        /// Who the local user is: an agent (the default) or a person (who may mark done what an agent holds).
        #[arg(long = "as", value_enum, default_value_t = KindArg::Agent)]
        kind: KindArg,
        /// A token to act as instead of the local user.
        #[arg(long, env = "CAIRN_TOKEN", hide_env_values = true)]
        token: Option<String>,
    },
    /// Accounts (tenants).
    Account {
        /// The account command.
        #[command(subcommand)]
        command: AccountCommand,
    },
    /// Bearer tokens.
    Token {
        /// The token command.
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Work items from the command line or a CI script: list, ready, show, create, claim, heartbeat, next, update,
    /// handoff, done — on the local database, or with `--url` through a server's REST API.
    #[command(after_help = EXIT_CODES)]
    Items {
        /// Who acts, and where.
        #[command(flatten)]
        actor: Actor,
        /// The items command (boxed: it is the largest of the `cairn` commands).
        #[command(subcommand)]
        command: Box<ItemsCommand>,
    },
    /// Record evidence for work_status from CI: a pull request `merged` at a commit, or a commit `rolled` out to a
    /// service — on the local database, or with `--url` through a server's REST API.
    #[command(after_help = EXIT_CODES)]
    Evidence {
        /// Who acts, and where.
        #[command(flatten)]
        actor: Actor,
        /// The evidence command (boxed, as items is).
        #[command(subcommand)]
        command: Box<EvidenceCommand>,
    },
}

/// `cairn work account …`.
#[derive(Debug, Subcommand)]
pub enum AccountCommand {
    /// Create an account; prints it as JSON (`{"id", "name", "default_repository", "created_at"}`), or only its id
    /// with `--quiet`.
    Create {
        /// A name for people.
        #[arg(long)]
        name: String,
        /// `owner/name` that work_status uses when a call names no repository.
        #[arg(long, default_value = "")]
        default_repository: String,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
    /// List every account (`{"accounts": [...]}`, oldest first), or only their ids with `--quiet`.
    List {
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
    /// Set an account's default repository (`acc_local` is the stdio user's account); prints the account.
    Update {
        /// The account id.
        #[arg(long)]
        account: String,
        /// `owner/name`, or "" to clear it.
        #[arg(long)]
        default_repository: String,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
    /// Give a principal a role in an account: `member` or `reader` lets a principal of another account use it;
    /// `owner` also lets it manage the account's tokens on the settings page (with an `admin` token).
    AddMember {
        /// The account id.
        #[arg(long)]
        account: String,
        /// The principal id (`prn_…`, printed by `token create`).
        #[arg(long)]
        principal_id: String,
        /// owner, member (read and write) or reader.
        #[arg(long, default_value = "member")]
        role: String,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
}

/// `cairn work token …`.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token for a principal (made if new) of an account; prints it once as JSON (`token`, `token_id`,
    /// `principal_id`, …), only the bearer token with `--format token`, or only its id with `--quiet`.
    Create {
        /// The account id; default the stdio user's account `acc_local`.
        #[arg(long, default_value = "acc_local")]
        account: String,
        /// The principal's name, e.g. "Ada" or "claude-code".
        #[arg(long)]
        principal: String,
        /// What the principal is.
        #[arg(long, value_enum)]
        kind: KindArg,
        /// Scopes, comma-separated: mcp:read|write and decisions:read|write (work items), roscoe:read|write|run|exec,
        /// deepwork:read|write, metrics:read (/metrics), admin (docs/security.md says what each allows).
        #[arg(long)]
        scopes: String,
        /// When it stops working: an RFC 3339 time, or a span like `30d`, `12h`, `90m`.
        #[arg(long)]
        expires: Option<String>,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
    /// List tokens, revoked and expired ones too, never their secrets (`{"tokens": [...]}`, oldest first, each with
    /// its `status`: active, expired or revoked), or only their ids with `--quiet`.
    List {
        /// Only the tokens of this account's principals.
        #[arg(long)]
        account: Option<String>,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
    /// Revoke a token; it is refused from the next request on. Prints `{"revoked": "tok_…"}`.
    Revoke {
        /// The token id (`tok_…`, from `token create` or `token list`).
        token_id: String,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
}

/// Runs a work command.
pub async fn run(args: WorkArgs) -> anyhow::Result<()> {
    if let Some(output) = args.command.output()
        && output.format() == Format::Token
        && !matches!(args.command, WorkCommand::Token { command: TokenCommand::Create { .. } })
    {
        bail!("--format token is only for `cairn work token create`; use json or id");
    }
    let url = args.database_url.unwrap_or_else(|| Store::default_url(&cairn_home()));
    match args.command {
        // These open the database only when they use it (not with --url).
        WorkCommand::Items { actor, command } => return work_items_cli::items(&url, actor, *command).await,
        WorkCommand::Evidence { actor, command } => return work_items_cli::evidence(&url, actor, *command).await,
        _ => {}
    }
    let store = Store::open(&url).await.context("cairn work needs its database")?;
    let service = Service::new(store.clone());
    let outcome = command(service, args.command).await;
    store.close().await;
    outcome
}

async fn command(service: Service, command: WorkCommand) -> anyhow::Result<()> {
    match command {
        WorkCommand::Items { .. } | WorkCommand::Evidence { .. } => unreachable!("run before the database opens"),
        WorkCommand::Mcp { kind, token } => {
            let caller = caller(&service, token, kind).await?;
            service.sweep_leases();
            cairn_mcp::serve_stdio(cairn_mcp::Server::new(WorkServer::local(service, caller))).await?;
        }
        WorkCommand::Account { command: AccountCommand::Create { name, default_repository, output } } => {
            let account = service.create_account(&name, &default_repository).await?;
            show(&output, account_json(&account), vec![account.id], None);
        }
        WorkCommand::Account { command: AccountCommand::List { output } } => {
            let accounts = service.list_accounts().await?;
            let ids = accounts.iter().map(|a| a.id.clone()).collect();
            show(&output, json!({"accounts": accounts.iter().map(account_json).collect::<Vec<_>>()}), ids, None);
        }
        WorkCommand::Account { command: AccountCommand::Update { account, default_repository, output } } => {
            let account = service.set_default_repository(&account, &default_repository).await?;
            show(&output, account_json(&account), vec![account.id], None);
        }
        WorkCommand::Account { command: AccountCommand::AddMember { account, principal_id, role, output } } => {
            service.add_member(&account, &principal_id, &role).await?;
            let printed = json!({"account_id": account, "principal_id": principal_id, "role": role});
            show(&output, printed, vec![principal_id], None);
        }
        WorkCommand::Token { command: TokenCommand::Create { account, principal, kind, scopes, expires, output } } => {
            let scopes = Scope::parse_list(&scopes).map_err(anyhow::Error::msg)?;
            let expires_at = expires.as_deref().map(expiry).transpose()?;
            if account == "acc_local" {
                service.local_caller(Kind::Agent).await?;
            }
            let token = service.create_token(&account, &principal, kind.into(), &scopes, expires_at).await?;
            let (id, bearer) = (token.grant.token_id.clone(), token.token.clone());
            show(&output, serde_json::to_value(token)?, vec![id], Some(bearer));
        }
        WorkCommand::Token { command: TokenCommand::List { account, output } } => {
            let tokens = service.list_tokens(account.as_deref()).await?;
            let ids = tokens.iter().map(|t| t.grant.token_id.clone()).collect();
            show(&output, json!({"tokens": tokens}), ids, None);
        }
        WorkCommand::Token { command: TokenCommand::Revoke { token_id, output } } => {
            if !service.revoke_token(&token_id).await? {
                bail!("no token '{token_id}' that is not already revoked (`cairn work token list` shows them)");
            }
            show(&output, json!({"revoked": token_id}), vec![token_id.clone()], None);
        }
    }
    Ok(())
}

/// An expiry argument as epoch milliseconds: RFC 3339, or `<n>d`, `<n>h`, `<n>m` from now.
fn expiry(text: &str) -> anyhow::Result<i64> {
    let now = chrono::Utc::now();
    if let Ok(at) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(at.timestamp_millis());
    }
    let (number, unit) = text.split_at(text.len().saturating_sub(1));
    let n: i64 = number.parse().with_context(|| format!("--expires '{text}': use RFC 3339 or 30d / 12h / 90m"))?;
    let span = match unit {
        "d" => chrono::Duration::days(n),
        "h" => chrono::Duration::hours(n),
        "m" => chrono::Duration::minutes(n),
        _ => bail!("--expires '{text}': use RFC 3339 or 30d / 12h / 90m"),
    };
    Ok((now + span).timestamp_millis())
}

fn account_json(account: &AccountRow) -> serde_json::Value {
    json!({
        "id": account.id,
        "name": account.name,
        "default_repository": account.default_repository,
        "created_at": chrono::DateTime::from_timestamp_millis(account.created_at)
            .unwrap_or_default()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    })
}

impl WorkCommand {
    /// The output options of a command that prints a result (every one but `mcp`).
    fn output(&self) -> Option<&Output> {
        match self {
            WorkCommand::Mcp { .. } => None,
            WorkCommand::Items { command, .. } => Some(command.output()),
            WorkCommand::Evidence { command, .. } => Some(command.output()),
            WorkCommand::Account { command } => match command {
                AccountCommand::Create { output, .. }
                | AccountCommand::List { output }
                | AccountCommand::Update { output, .. }
                | AccountCommand::AddMember { output, .. } => Some(output),
            },
            WorkCommand::Token { command } => match command {
                TokenCommand::Create { output, .. } | TokenCommand::List { output, .. } | TokenCommand::Revoke { output, .. } => {
                    Some(output)
                }
            },
        }
    }
}
