//! `cairn work items …` and `cairn work evidence …`: work items and merged / rolled evidence for people and CI
//! scripts. Each command is one call of the work facade ([`crate::work_calls`]), made on the local database (as the
//! holder of `CAIRN_TOKEN`, or the local user `--as` agent or person, like `cairn work mcp`) or, with `--url`, through
//! the REST API of that `cairn serve` with `Authorization: Bearer $CAIRN_TOKEN`. Both print the same JSON (the work
//! tools' shapes) or with `-q` only the ids, and end with the exit codes of [`EXIT_CODES`].

use std::time::Duration;

use anyhow::Context;
use cairn_store::Store;
use cairn_work::{EvidenceInput, ItemUpdate, ListQuery, NewItemInput, Service};
use clap::{Args, Subcommand};
use reqwest::Url;
use serde_json::Value;

use crate::roscoe_cli::exit::Exit;
use crate::span::parse_span;
use crate::work_calls::{Call, locally, over_rest};
use crate::work_options::{KindArg, Output, caller, show};
use crate::work_remote::{Failure, Remote, parse_base_url};

/// The exit codes of `cairn work items …` and `cairn work evidence …`, for their `--help`.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  success; also `items next` when nothing is ready: it prints {\"item\": null, \"reason\": …} (nothing with -q)
  1  any other error: a refused argument, a state that does not allow it, a missing or refused token, no server at
     --url; the message on stderr says what was wrong and what to do
  2  usage error: an unknown flag, a missing or malformed argument
  3  conflict: the item is held by someone else (stderr names the holder) or handed off to another, or the
     evidence contradicts what is recorded
  4  not found: no such item, space, document or account in an account you can use";

/// Who acts, and where: the local database (the default) or the `cairn serve` at `--url`.
#[derive(Debug, Clone, Args)]
pub struct Actor {
    /// Go through the REST API of the `cairn serve` at this base URL (`http://HOST:PORT`) instead of the local
    /// database; needs CAIRN_TOKEN.
    #[arg(long, env = "CAIRN_URL", value_name = "URL", value_parser = parse_base_url, global = true)]
    pub url: Option<Url>,
    /// Act as the holder of this bearer token (required with --url; on the local database instead of the local
    /// user).
    #[arg(long, env = "CAIRN_TOKEN", hide_env_values = true, global = true)]
    pub token: Option<String>,
    /// Without a token on the local database: the local user acts as an agent (the default) or a person (who may
    /// mark done what an agent holds).
    #[arg(long = "as", value_enum, value_name = "KIND", default_value_t = KindArg::Agent, global = true)]
    pub kind: KindArg,
}

/// `cairn work items …`.
#[derive(Debug, Subcommand)]
pub enum ItemsCommand {
    /// List items, latest change first (`{"items": [...], "next_page_token"}`): every state but done unless
    /// --state says otherwise.
    List {
        /// Only this space's items (`sp_…`); --state ready needs it.
        #[arg(long, value_name = "SPACE")]
        space: Option<String>,
        /// open, claimed, in_progress, blocked, done, or ready (what `items ready` lists).
        #[arg(long, value_parser = ["open", "claimed", "in_progress", "blocked", "done", "ready"])]
        state: Option<String>,
        /// Only items carrying every one of these labels (comma-separated).
        #[arg(long, value_delimiter = ',', value_name = "A,B")]
        labels: Vec<String>,
        /// Only items of this priority (0 most urgent to 4).
        #[arg(long, value_parser = clap::value_parser!(i64).range(0..=4))]
        priority: Option<i64>,
        /// Only items whose title or notes hold all these words.
        #[arg(long, value_name = "WORDS")]
        query: Option<String>,
        /// Only what this claimant holds.
        #[arg(long, value_name = "NAME")]
        claimed_by: Option<String>,
        /// Only items implementing this document (`doc_…`).
        #[arg(long, value_name = "DOCUMENT")]
        document: Option<String>,
        /// Items per page: 1 to 200 (default 50).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(1..=200))]
        page_size: Option<i64>,
        /// The `next_page_token` of the page before.
        #[arg(long, value_name = "TOKEN")]
        page_token: Option<String>,
        /// The account; default your own.
        #[command(flatten)]
        account: AccountArg,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
    /// The ready queue of a space (`{"items": [...]}`): open items nobody holds whose blockers are all done, most
    /// urgent first, then oldest.
    Ready {
        /// The space (`sp_…`).
        #[arg(long, value_name = "SPACE")]
        space: String,
        /// Only items carrying every one of these labels (comma-separated).
        #[arg(long, value_delimiter = ',', value_name = "A,B")]
        labels: Vec<String>,
        /// At most this many: 1 to 200 (default 50).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(1..=200))]
        page_size: Option<i64>,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
    /// One item with what it waits for, what waits for it, its children and its history (`{"item", "blockers",
    /// "blocks", "children", "events"}`).
    Show {
        /// The item (`wi_…`).
        id: String,
        /// The account; default your own.
        #[command(flatten)]
        account: AccountArg,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
    /// Create an open item (`{"item"}`); `-q` prints only its id, for the next command.
    Create {
        /// The space (`sp_…`).
        #[arg(long, value_name = "SPACE")]
        space: String,
        /// One line, 1 to 200 characters.
        #[arg(long)]
        title: String,
        /// What to do, up to 4000 characters.
        #[arg(long)]
        notes: Option<String>,
        /// An http(s) link (repeat for more, at most ten).
        #[arg(long = "link", value_name = "URL")]
        links: Vec<String>,
        /// The document of the space it implements (`doc_…`).
        #[arg(long, value_name = "DOCUMENT")]
        document: Option<String>,
        /// 0 (most urgent) to 4; default 2.
        #[arg(long, value_parser = clap::value_parser!(i64).range(0..=4))]
        priority: Option<i64>,
        /// Labels, comma-separated.
        #[arg(long, value_delimiter = ',', value_name = "A,B")]
        labels: Vec<String>,
        /// Items of the space it waits for, comma-separated: it is not ready until they are done.
        #[arg(long, value_delimiter = ',', value_name = "ID,ID")]
        blocked_by: Vec<String>,
        /// The item of the space it belongs to.
        #[arg(long, value_name = "ID")]
        parent: Option<String>,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
    /// Claim an item before working on it (`{"item"}`); exit 3, naming the holder, when someone else holds it.
    Claim {
        /// The item (`wi_…`).
        id: String,
        /// Who holds it, as you name yourself ("ci deploy", "claude-code").
        #[arg(long, value_name = "NAME")]
        claimant: String,
        /// A lease (`90s`, `10m`, `2h`): it opens again unless renewed (`items heartbeat`) in time.
        #[arg(long, value_name = "SPAN", value_parser = parse_span)]
        lease: Option<Duration>,
        /// The account; default your own.
        #[command(flatten)]
        account: AccountArg,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
    /// Renew the lease you hold on an item for as long again as it was claimed for (`{"item"}`).
    Heartbeat {
        /// The item (`wi_…`).
        id: String,
        /// The name it was claimed under.
        #[arg(long, value_name = "NAME")]
        claimant: String,
        /// The account; default your own.
        #[command(flatten)]
        account: AccountArg,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
    /// Claim the first ready item of a space (`{"item"}`); when nothing is ready, `{"item": null, "reason"}`
    /// (nothing with -q), still exit 0.
    Next {
        /// The space (`sp_…`).
        #[arg(long, value_name = "SPACE")]
        space: String,
        /// Who holds it, as you name yourself.
        #[arg(long, value_name = "NAME")]
        claimant: String,
        /// Only items carrying every one of these labels (comma-separated).
        #[arg(long, value_delimiter = ',', value_name = "A,B")]
        labels: Vec<String>,
        /// A lease (`90s`, `10m`, `2h`), as for `claim`.
        #[arg(long, value_name = "SPAN", value_parser = parse_span)]
        lease: Option<Duration>,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
    /// Change an item (`{"item", "changed"}`): its state, notes, priority, labels, blockers, parent or links.
    Update {
        /// The item (`wi_…`).
        id: String,
        /// What to change.
        #[command(flatten)]
        change: Change,
        /// The account; default your own.
        #[command(flatten)]
        account: AccountArg,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
    /// Open an item again with a note for the next holder (`{"item"}`).
    Handoff {
        /// The item (`wi_…`).
        id: String,
        /// What was done and what is left.
        #[arg(long)]
        note: String,
        /// Whom it is for; only they (or a person) may claim it. Default anyone.
        #[arg(long, value_name = "NAME")]
        to: Option<String>,
        /// The account; default your own.
        #[command(flatten)]
        account: AccountArg,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
    /// Mark an item done (`items update ID --state done`): its holder, or a person (`--as person`), may.
    Done {
        /// The item (`wi_…`).
        id: String,
        /// The account; default your own.
        #[command(flatten)]
        account: AccountArg,
        /// How to print the result.
        #[command(flatten)]
        output: Output,
    },
}

/// What `items update` changes; at least one is needed.
#[derive(Debug, Clone, Args)]
pub struct Change {
    /// in_progress, blocked or done.
    #[arg(long, value_parser = ["in_progress", "blocked", "done"])]
    pub state: Option<String>,
    /// New notes, up to 4000 characters.
    #[arg(long)]
    pub notes: Option<String>,
    /// 0 (most urgent) to 4.
    #[arg(long, value_parser = clap::value_parser!(i64).range(0..=4))]
    pub priority: Option<i64>,
    /// Labels to add, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub add_labels: Vec<String>,
    /// Labels to take away, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub remove_labels: Vec<String>,
    /// Items it now waits for too, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "ID,ID")]
    pub add_blocked_by: Vec<String>,
    /// Items it no longer waits for, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "ID,ID")]
    pub remove_blocked_by: Vec<String>,
    /// The new parent item; `--parent ''` takes it away.
    #[arg(long, value_name = "ID")]
    pub parent: Option<String>,
    /// A link to add (repeat for more; an item keeps at most ten).
    #[arg(long = "link", value_name = "URL")]
    pub links: Vec<String>,
}

/// `cairn work evidence …`.
#[derive(Debug, Subcommand)]
pub enum EvidenceCommand {
    /// Record that a pull request merged at a commit (`{"evidence", "created"}`). A repeat changes nothing; the
    /// same pull request at another commit is a conflict (exit 3).
    Merged {
        /// `owner/name`; default: the account's default repository.
        #[arg(long, value_name = "OWNER/NAME", default_value = "")]
        repository: String,
        /// The pull request's number.
        #[arg(long, value_name = "N")]
        pr: i64,
        /// The merge commit, 7 to 64 hex digits.
        #[arg(long, value_name = "SHA")]
        commit: String,
        /// When, in which account, and how to print the result.
        #[command(flatten)]
        common: EvidenceArgs,
    },
    /// Record that a service now runs a commit carrying these pull requests (`{"evidence", "created", "added"}`);
    /// a repeat adds the pull requests not yet recorded.
    Rolled {
        /// The service rolled out (letters, digits and . _ : / -).
        #[arg(long)]
        service: String,
        /// The commit it runs, 7 to 64 hex digits.
        #[arg(long, value_name = "SHA")]
        commit: String,
        /// The pull requests the commit carries, comma-separated.
        #[arg(long, value_delimiter = ',', value_name = "N,N", required = true)]
        prs: Vec<i64>,
        /// `owner/name` of the commit; default: the account's default repository.
        #[arg(long, value_name = "OWNER/NAME", default_value = "")]
        repository: String,
        /// When, in which account, and how to print the result.
        #[command(flatten)]
        common: EvidenceArgs,
    },
}

/// What every evidence command takes.
#[derive(Debug, Clone, Args)]
pub struct EvidenceArgs {
    /// When it happened, RFC 3339 (`2025-05-01T12:00:00Z`); default now.
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,
    /// The account; default your own.
    #[command(flatten)]
    pub account: AccountArg,
    /// How to print the result.
    #[command(flatten)]
    pub output: Output,
}

/// `--account`, where a call takes one.
#[derive(Debug, Clone, Args)]
pub struct AccountArg {
    /// The account (`acc_…`); default the token's own (`acc_local` for the local user).
    #[arg(long = "account", value_name = "ACCOUNT")]
    pub account_id: Option<String>,
}

impl ItemsCommand {
    /// How the command prints its result.
    pub(crate) fn output(&self) -> &Output {
        match self {
            ItemsCommand::List { output, .. }
            | ItemsCommand::Ready { output, .. }
            | ItemsCommand::Show { output, .. }
            | ItemsCommand::Create { output, .. }
            | ItemsCommand::Claim { output, .. }
            | ItemsCommand::Heartbeat { output, .. }
            | ItemsCommand::Next { output, .. }
            | ItemsCommand::Update { output, .. }
            | ItemsCommand::Handoff { output, .. }
            | ItemsCommand::Done { output, .. } => output,
        }
    }

    fn call(self) -> (Call, Output) {
        let text = Option::<String>::unwrap_or_default;
        match self {
            ItemsCommand::List {
                space, state, labels, priority, query, claimed_by, document, page_size, page_token, account, output,
            } => {
                let query = ListQuery {
                    account_id: text(account.account_id),
                    space_id: text(space),
                    document_id: text(document),
                    state: text(state),
                    claimed_by: text(claimed_by),
                    labels,
                    priority,
                    query: text(query),
                    page_size: page_size.unwrap_or_default(),
                    page_token: text(page_token),
                };
                (Call::List(query), output)
            }
            ItemsCommand::Ready { space, labels, page_size, output } => {
                (Call::Ready { space, labels, page_size: page_size.unwrap_or_default() }, output)
            }
            ItemsCommand::Show { id, account, output } => {
                (Call::Show { account: text(account.account_id), id }, output)
            }
            ItemsCommand::Create {
                space, title, notes, links, document, priority, labels, blocked_by, parent, output,
            } => {
                let input = NewItemInput {
                    space_id: space,
                    title,
                    notes: text(notes),
                    links,
                    document_id: text(document),
                    priority,
                    labels,
                    parent_id: text(parent),
                    blocked_by,
                };
                (Call::Create(input), output)
            }
            ItemsCommand::Claim { id, claimant, lease, account, output } => {
                (Call::Claim { account: text(account.account_id), id, claimant, lease: lease.map(seconds) }, output)
            }
            ItemsCommand::Heartbeat { id, claimant, account, output } => {
                (Call::Heartbeat { account: text(account.account_id), id, claimant }, output)
            }
            ItemsCommand::Next { space, claimant, labels, lease, output } => {
                (Call::Next { space, claimant, labels, lease: lease.map(seconds) }, output)
            }
            ItemsCommand::Update { id, change, account, output } => {
                let update = ItemUpdate {
                    state: text(change.state),
                    notes: text(change.notes),
                    links: change.links,
                    priority: change.priority,
                    add_labels: change.add_labels,
                    remove_labels: change.remove_labels,
                    add_blocked_by: change.add_blocked_by,
                    remove_blocked_by: change.remove_blocked_by,
                    parent_id: change.parent,
                };
                (Call::Update { account: text(account.account_id), id, update }, output)
            }
            ItemsCommand::Handoff { id, note, to, account, output } => {
                (Call::Handoff { account: text(account.account_id), id, note, to: text(to) }, output)
            }
            ItemsCommand::Done { id, account, output } => {
                let update = ItemUpdate { state: "done".into(), ..ItemUpdate::default() };
                (Call::Update { account: text(account.account_id), id, update }, output)
            }
        }
    }
}

impl EvidenceCommand {
    /// How the command prints its result.
    pub(crate) fn output(&self) -> &Output {
        match self {
            EvidenceCommand::Merged { common, .. } | EvidenceCommand::Rolled { common, .. } => &common.output,
        }
    }

    fn call(self) -> (Call, Output) {
        let (kind, repository, commit, pull_requests, service, common) = match self {
            EvidenceCommand::Merged { repository, pr, commit, common } => {
                ("merged", repository, commit, vec![pr], String::new(), common)
            }
            EvidenceCommand::Rolled { service, commit, prs, repository, common } => {
                ("rolled", repository, commit, prs, service, common)
            }
        };
        let input = EvidenceInput {
            account_id: common.account.account_id.unwrap_or_default(),
            kind: kind.into(),
            repository,
            commit,
            pull_requests,
            service,
            at: common.at.unwrap_or_default(),
        };
        (Call::Evidence(input), common.output)
    }
}

fn seconds(span: Duration) -> i64 {
    i64::try_from(span.as_secs()).unwrap_or(i64::MAX)
}

/// Runs `cairn work items <command>` on the database at `database_url` or the server `actor` names.
pub(crate) async fn items(database_url: &str, actor: Actor, command: ItemsCommand) -> anyhow::Result<()> {
    let (call, output) = command.call();
    run(database_url, actor, call, &output).await
}

/// Runs `cairn work evidence <command>` on the database at `database_url` or the server `actor` names.
pub(crate) async fn evidence(database_url: &str, actor: Actor, command: EvidenceCommand) -> anyhow::Result<()> {
    let (call, output) = command.call();
    run(database_url, actor, call, &output).await
}

async fn run(database_url: &str, actor: Actor, call: Call, output: &Output) -> anyhow::Result<()> {
    let token = actor.token.filter(|t| !t.trim().is_empty());
    let answer = match actor.url {
        Some(url) => {
            let Some(token) = token else {
                anyhow::bail!(
                    "--url needs a bearer token in CAIRN_TOKEN (or --token); make one on the server with `cairn work \
                     token create --principal NAME --kind service --scopes \
                     mcp:read,mcp:write,decisions:read,decisions:write --format token`"
                );
            };
            over_rest(&Remote::new(url, token)?, call).await
        }
        None => {
            let store = Store::open(database_url).await.context("cairn work needs its database")?;
            let service = Service::new(store.clone());
            let answer = match caller(&service, token, actor.kind).await {
                Ok(caller) => Ok(locally(&service, &caller, call).await),
                Err(error) => Err(error),
            };
            store.close().await;
            answer?
        }
    };
    let answer = answer.map_err(exit)?;
    let ids = ids(&answer);
    show(output, answer, ids, None);
    Ok(())
}

/// The ids `-q` prints: of the items listed, of the item, or of the evidence record; none when `next` found none.
fn ids(answer: &Value) -> Vec<String> {
    let id = |v: &Value| v["id"].as_str().map(str::to_owned);
    match answer["items"].as_array() {
        Some(items) => items.iter().filter_map(id).collect(),
        None => id(&answer["item"]).or_else(|| id(&answer["evidence"])).into_iter().collect(),
    }
}

/// A failed call as the error the command ends with: its message and code on stderr, exit 3 for a conflict, 4 for
/// something not found, else 1.
fn exit(failure: Failure) -> anyhow::Error {
    let code = match failure.code.as_str() {
        "conflict" => 3,
        "not_found" => 4,
        _ => 1,
    };
    anyhow::Error::new(Exit { code, message: Some(format!("{} ({})", failure.message, failure.code)) })
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;
    use serde_json::json;

    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        crate::Cli::command().debug_assert();
    }

    #[test]
    fn quiet_prints_the_ids_of_what_came_back() {
        let listed = json!({"items": [{"id": "wi_1"}, {"id": "wi_2"}], "next_page_token": ""});
        assert_eq!(ids(&listed), ["wi_1", "wi_2"]);
        assert_eq!(ids(&json!({"item": {"id": "wi_3"}, "changed": []})), ["wi_3"]);
        assert!(ids(&json!({"item": null, "reason": "nothing is ready"})).is_empty());
        assert_eq!(ids(&json!({"evidence": {"id": "ev_1"}, "created": true})), ["ev_1"]);
    }

    #[test]
    fn conflicts_and_missing_things_have_their_own_exit_codes() {
        let code = |code: &str| {
            let error = exit(Failure { code: code.into(), message: "m".into() });
            error.downcast_ref::<Exit>().map(|e| e.code)
        };
        assert_eq!((code("conflict"), code("not_found"), code("permission_denied")), (Some(3), Some(4), Some(1)));
    }
}
