//! The options every `cairn work` command shares, below both [`crate::work_cli`] (accounts, tokens, `mcp`) and
//! [`crate::work_items_cli`] (items, evidence): how a result is printed ([`Output`], [`show`]) and who acts on the
//! local database ([`KindArg`], [`caller`]: the holder of `CAIRN_TOKEN`, or the local user).

use anyhow::bail;
use cairn_work::{Caller, Kind, Service};
use clap::{Args, ValueEnum};

/// How a command prints its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One JSON object (the default).
    Json,
    /// Only the id of what was made, changed or listed, one a line.
    Id,
    /// Only the bearer token (`token create`).
    Token,
}

/// The output options every account, token, item and evidence command takes.
#[derive(Debug, Clone, Args)]
pub struct Output {
    /// What to print: json (the default), id, or token (only `token create`: the bearer token alone).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with_all = ["quiet", "json"])]
    pub format: Option<Format>,
    /// Print only the id (the same as `--format id`).
    #[arg(short, long, conflicts_with = "json")]
    pub quiet: bool,
    /// Print one JSON object (the default; the same as `--format json`).
    #[arg(long)]
    pub json: bool,
}

impl Output {
    /// The format asked for.
    pub(crate) fn format(&self) -> Format {
        match (self.format, self.quiet) {
            (Some(format), _) => format,
            (None, true) => Format::Id,
            (None, false) => Format::Json,
        }
    }
}

/// Prints a command's result as `output` asks: `json`, the `ids` one a line, or the bearer `token` of a new token.
pub(crate) fn show(output: &Output, json: serde_json::Value, ids: Vec<String>, token: Option<String>) {
    match (output.format(), token) {
        (Format::Json, _) => println!("{json}"),
        (Format::Id, _) => ids.iter().for_each(|id| println!("{id}")),
        (Format::Token, Some(token)) => println!("{token}"),
        (Format::Token, None) => unreachable!("checked before the command ran"),
    }
}

/// A principal kind on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum KindArg {
    /// A human.
    Person,
    /// An AI agent.
    Agent,
    /// A CI or roll script.
    Service,
}

impl From<KindArg> for Kind {
    fn from(kind: KindArg) -> Kind {
        match kind {
            KindArg::Person => Kind::Person,
            KindArg::Agent => Kind::Agent,
            KindArg::Service => Kind::Service,
        }
    }
}

/// Who acts on the local database: the holder of `token` when one is given (refused when it is not valid), else the
/// local user (account `acc_local`, every scope) as `kind`.
pub(crate) async fn caller(service: &Service, token: Option<String>, kind: KindArg) -> anyhow::Result<Caller> {
    match token.filter(|t| !t.trim().is_empty()) {
        Some(token) => match service.authenticate(&token).await? {
            Some(caller) => Ok(caller),
            None => bail!(
                "CAIRN_TOKEN is not a valid token (unknown, expired or revoked): `cairn work token list` shows them, \
                 `cairn work token create` makes a new one; unset it to act as the local user"
            ),
        },
        None => Ok(service.local_caller(kind.into()).await?),
    }
}
