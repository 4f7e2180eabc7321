//! The facade every work and decisions operation goes through — MCP tools today, REST and web pages later. Each
//! operation takes the authenticated [`Caller`] and already-parsed arguments, checks them (all argument problems
//! before any look-up, then existence and access, then permission, then state), makes its change in one database
//! transaction, and returns plain serializable data.
//!
//! - [`admin`](Service::create_account): accounts, tokens and memberships for the CLI, and authentication;
//! - decisions: spaces and documents with every version kept;
//! - items: create, claim, update, hand off and list work items (compare-and-swap on the item's version);
//! - graph: what items wait for and belong to, with no cycles; ready: the ready queue and claim-next; leases: claims
//!   that end by themselves when their holder stops renewing them;
//! - evidence: merged / rolled records and `work_status`;
//! - sign-ins: the web UI's browser sign-ins, kept on the server;
//! - owners: the accounts a principal owns and their tokens, for the web UI's settings page.

mod admin;
mod decisions;
mod evidence;
mod graph;
mod items;
mod leases;
mod owners;
mod ready;
mod signins;
mod token_cache;

use std::sync::Arc;

use cairn_store::Store;
use tokio::sync::OnceCell;
use cairn_store::work::accounts::{self, AccountRow};
use cairn_store::work::decisions::{self as store_decisions, SpaceRow};

use crate::auth::Caller;
use crate::error::Error;
use crate::page::PageKey;

pub use admin::{NewToken, TokenGrant, TokenInfo};
pub use decisions::{Document, DocumentSummary, Space};
pub use evidence::{Evidence, EvidenceInput, LinkedPullRequest, RecordedEvidence};
pub use items::{ItemEvent, ItemHistory, ItemList, ItemRef, ItemUpdate, ListQuery, NewItemInput};
pub use owners::OwnedAccount;
pub use ready::ClaimedNext;
pub use signins::{SIGN_IN_TTL_MS, SignIn};

/// How often a change is retried when another writer changed the same row first (Postgres; SQLite serializes).
const ATTEMPTS: usize = 8;

/// The work and decisions facade over one database.
#[derive(Debug, Clone)]
pub struct Service {
    store: Store,
    page_key: Arc<OnceCell<PageKey>>,
    tokens: Arc<token_cache::TokenCache>,
    /// The lease of a claim made without `lease_seconds`, in ms; 0 for none.
    default_lease_ms: i64,
}

impl Service {
    /// The facade over `store`.
    pub fn new(store: Store) -> Service {
        Service { store, page_key: Arc::new(OnceCell::new()), tokens: Arc::default(), default_lease_ms: 0 }
    }

    /// The page-token key every process sharing the database uses (made by the first to need it, then cached).
    async fn page_key(&self) -> Result<&PageKey, Error> {
        self.page_key
            .get_or_try_init(|| async {
                let fresh = PageKey::generate_hex();
                let stored = cairn_store::work::setting_or_init(self.store.pool(), "page_token_key", &fresh).await?;
                PageKey::from_hex(&stored)
                    .ok_or_else(|| Error::Internal("the stored page_token_key setting is not 64 hex digits".into()))
            })
            .await
    }

    /// Answers when the database does (for health checks).
    pub async fn ping(&self) -> Result<(), Error> {
        Ok(self.store.ping().await?)
    }

    /// The account an `account_id` argument names ("" = the caller's own), if the caller may use it — for changes
    /// (`write`) a member with the `reader` role may not. Accounts the caller cannot see are `not_found`.
    async fn account(&self, caller: &Caller, account_id: &str, write: bool) -> Result<AccountRow, Error> {
        let id = if account_id.trim().is_empty() { caller.home_account_id.as_str() } else { account_id.trim() };
        self.check_access(caller, id, write).await?;
        accounts::get_account(self.store.pool(), id).await?.ok_or_else(|| Error::not_found("account", id))
    }

    /// The id of the account a call acts in, checked as [`Service::account`] checks it but without reading the
    /// account's row: the caller's own account exists while the caller does, and a membership names an account that
    /// exists.
    async fn account_id(&self, caller: &Caller, account_id: &str, write: bool) -> Result<String, Error> {
        let id = if account_id.trim().is_empty() { caller.home_account_id.as_str() } else { account_id.trim() };
        self.check_access(caller, id, write).await?;
        Ok(id.to_owned())
    }

    /// Ok when the caller may read (or, with `write`, change) account `id`.
    async fn check_access(&self, caller: &Caller, id: &str, write: bool) -> Result<(), Error> {
        if id == caller.home_account_id {
            return Ok(());
        }
        match accounts::membership_role(self.store.pool(), id, &caller.principal_id).await? {
            None => Err(Error::not_found("account", id)),
            Some(role) if write && role == "reader" => Err(Error::PermissionDenied(format!(
                "you are a reader of account '{id}'; ask one of its owners for the member role to change things"
            ))),
            Some(_) => Ok(()),
        }
    }

    /// The space `space_id`, if the caller may use its account (`write` for changes).
    async fn space(&self, caller: &Caller, space_id: &str, write: bool) -> Result<SpaceRow, Error> {
        let id = space_id.trim();
        if id.is_empty() {
            return Err(Error::InvalidArgument("space_id is required (decisions_list_spaces lists them)".into()));
        }
        let space = store_decisions::get_space(self.store.pool(), id).await?.ok_or_else(|| Error::not_found("space", id))?;
        match self.check_access(caller, &space.account_id, write).await {
            Err(Error::NotFound(_)) => Err(Error::not_found("space", id)),
            other => other.map(|()| space),
        }
    }
}
