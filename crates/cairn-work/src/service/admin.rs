//! Accounts, principals, tokens and memberships (the `cairn work account|token|member` commands), authentication of
//! bearer tokens, and the fixed local user that `cairn work mcp` serves over stdio.

use cairn_store::work::accounts::{self, AccountRow, PrincipalRow, TokenRow};
use serde::Serialize;

use super::Service;
use crate::auth::{self, Caller, Kind, Scope};
use crate::error::Error;
use crate::ids::new_id;
use crate::text;
use crate::time::{format_ms, format_opt, now_ms};

/// The account of the local stdio user.
const LOCAL_ACCOUNT: &str = "acc_local";
/// The principal of the local user acting as a person.
pub(super) const LOCAL_PERSON: &str = "prn_local_person";
/// Use of a token is recorded at most this often (ms), so busy tokens do not write on every request.
const LAST_USED_GRANULARITY: i64 = 60_000;

/// Whom a token speaks for and what it may do, as a new token and a listed one both show it.
#[derive(Debug, Clone, Serialize)]
pub struct TokenGrant {
    /// `tok_…`, for `cairn work token revoke`.
    pub token_id: String,
    /// The principal it speaks for.
    pub principal_id: String,
    /// The principal's name.
    pub principal: String,
    /// person, agent or service.
    pub kind: String,
    /// The principal's home account.
    pub account_id: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
}

impl TokenGrant {
    /// The grant of token `token_id`, which speaks for `principal` with the space-separated `scopes`.
    fn of(token_id: String, principal: PrincipalRow, scopes: &str) -> TokenGrant {
        TokenGrant {
            token_id,
            principal_id: principal.id,
            principal: principal.display_name,
            kind: principal.kind,
            account_id: principal.home_account_id,
            scopes: scopes.split_whitespace().map(str::to_owned).collect(),
        }
    }
}

/// A token just created: the bearer secret is shown here once and never again.
#[derive(Debug, Clone, Serialize)]
pub struct NewToken {
    /// The bearer token (`Authorization: Bearer …`, or `CAIRN_TOKEN` for stdio).
    pub token: String,
    /// Whom it speaks for, and its scopes.
    #[serde(flatten)]
    pub grant: TokenGrant,
    /// RFC 3339, or "" for never.
    pub expires_at: String,
}

/// A token as `cairn work token list` shows it: never its secret, nor the secret's hash.
#[derive(Debug, Clone, Serialize)]
pub struct TokenInfo {
    /// Whom it speaks for, and its scopes.
    #[serde(flatten)]
    pub grant: TokenGrant,
    /// `active`, `expired` or `revoked`.
    pub status: &'static str,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339, or "" for never.
    pub expires_at: String,
    /// RFC 3339 (to the minute), or "" when it was never used.
    pub last_used_at: String,
    /// RFC 3339, or "" when it is not revoked.
    pub revoked_at: String,
}

impl Service {
    /// Every account, oldest first.
    pub async fn list_accounts(&self) -> Result<Vec<AccountRow>, Error> {
        Ok(accounts::list_accounts(self.store.pool()).await?)
    }

    /// The tokens of the principals whose home is `account_id` (of every account when `None`), revoked and expired
    /// ones too, oldest first.
    pub async fn list_tokens(&self, account_id: Option<&str>) -> Result<Vec<TokenInfo>, Error> {
        let pool = self.store.pool();
        if let Some(id) = account_id {
            accounts::get_account(pool, id).await?.ok_or_else(|| Error::not_found("account", id))?;
        }
        let now = now_ms();
        let rows = accounts::list_tokens(pool, account_id).await?;
        Ok(rows
            .into_iter()
            .map(|(token, principal)| TokenInfo {
                status: match (token.revoked_at, token.expires_at) {
                    (Some(_), _) => "revoked",
                    (None, Some(at)) if at <= now => "expired",
                    _ => "active",
                },
                grant: TokenGrant::of(token.id, principal, &token.scopes),
                created_at: format_ms(token.created_at),
                expires_at: format_opt(token.expires_at),
                last_used_at: format_opt(token.last_used_at),
                revoked_at: format_opt(token.revoked_at),
            })
            .collect())
    }

    /// Creates an account; `default_repository` ("" for none) is what `work_status` uses when a call names none.
    pub async fn create_account(&self, name: &str, default_repository: &str) -> Result<AccountRow, Error> {
        let name = text::single_line("name", name, 1, 100)?;
        let default_repository = match default_repository.trim() {
            "" => String::new(),
            repo => text::repository("default_repository", repo)?.0,
        };
        let now = now_ms();
        let row = AccountRow { id: new_id("acc_", now), name, default_repository, created_at: now };
        accounts::insert_account(self.store.pool(), &row).await?;
        Ok(row)
    }

    /// Sets (or, with "", clears) an account's default repository.
    pub async fn set_default_repository(&self, account_id: &str, repository: &str) -> Result<AccountRow, Error> {
        let repository = match repository.trim() {
            "" => String::new(),
            repo => text::repository("default_repository", repo)?.0,
        };
        if !accounts::set_default_repository(self.store.pool(), account_id, &repository).await? {
            return Err(Error::not_found("account", account_id));
        }
        accounts::get_account(self.store.pool(), account_id).await?.ok_or_else(|| Error::not_found("account", account_id))
    }

    /// Creates a token for the principal of `account_id` named `principal` with `kind` (made if it does not exist;
    /// a new person becomes the account's owner when it has none yet), holding `scopes`, valid until `expires_at`
    /// (epoch ms) if given. This is the server operator's way (`cairn work token create`); callers over the network
    /// go through [`Service::create_token_as_owner`], which bounds the scopes.
    pub async fn create_token(
        &self,
        account_id: &str,
        principal: &str,
        kind: Kind,
        scopes: &[Scope],
        expires_at: Option<i64>,
    ) -> Result<NewToken, Error> {
        let principal = text::single_line("principal", principal, 1, 100)?;
        if scopes.is_empty() {
            return Err(Error::InvalidArgument("give at least one scope".into()));
        }
        let now = now_ms();
        if expires_at.is_some_and(|at| at <= now) {
            return Err(Error::InvalidArgument("the expiry is in the past".into()));
        }
        let pool = self.store.pool();
        accounts::get_account(pool, account_id).await?.ok_or_else(|| Error::not_found("account", account_id))?;
        let found = accounts::find_principal(pool, account_id, &principal, kind.as_str()).await?;
        let row = match found {
            Some(row) => row,
            None => {
                let row = PrincipalRow {
                    id: new_id("prn_", now),
                    home_account_id: account_id.to_owned(),
                    kind: kind.as_str().into(),
                    display_name: principal.clone(),
                    created_at: now,
                };
                // Another process may make the same principal at this moment: the first insert wins, the rest
                // find its row.
                accounts::ensure_principal(pool, &row).await?;
                let row = accounts::find_principal(pool, account_id, &principal, kind.as_str())
                    .await?
                    .ok_or_else(|| Error::Internal(format!("principal '{principal}' vanished while it was made")))?;
                // Being named in a token makes nobody an owner; an account's first person is its owner, and
                // `cairn work account add-member --role owner` names the others.
                if kind == Kind::Person {
                    accounts::put_first_owner(pool, account_id, &row.id).await?;
                }
                row
            }
        };
        let minted = auth::mint(&new_id("tok_", now));
        let scope_text = scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ");
        let token = TokenRow {
            id: minted.token_id,
            principal_id: row.id.clone(),
            secret_hash: minted.secret_hash,
            scopes: scope_text,
            created_at: now,
            expires_at,
            revoked_at: None,
            last_used_at: None,
        };
        accounts::insert_token(pool, &token).await?;
        Ok(NewToken {
            token: minted.bearer,
            grant: TokenGrant::of(token.id, row, &token.scopes),
            expires_at: format_opt(expires_at),
        })
    }

    /// Revokes a token; false when there is no such token or it was revoked before.
    pub async fn revoke_token(&self, token_id: &str) -> Result<bool, Error> {
        let revoked = accounts::revoke_token(&self.store, token_id.trim(), now_ms()).await?;
        self.tokens.forget(token_id.trim());
        Ok(revoked)
    }

    /// Lets principal `principal_id` use account `account_id` as `owner`, `member` or `reader`.
    pub async fn add_member(&self, account_id: &str, principal_id: &str, role: &str) -> Result<(), Error> {
        if !matches!(role, "owner" | "member" | "reader") {
            return Err(Error::InvalidArgument(format!("role '{role}' is not owner, member or reader")));
        }
        let pool = self.store.pool();
        accounts::get_account(pool, account_id).await?.ok_or_else(|| Error::not_found("account", account_id))?;
        accounts::get_principal(pool, principal_id).await?.ok_or_else(|| Error::not_found("principal", principal_id))?;
        accounts::put_membership(pool, account_id, principal_id, role).await?;
        Ok(())
    }

    /// The caller a bearer token speaks for; `None` when the token is malformed, unknown, expired or revoked. On
    /// Postgres the token is read from this process's cache of tokens when it may be ([`token_cache`]).
    ///
    /// [`token_cache`]: super::token_cache
    pub async fn authenticate(&self, bearer: &str) -> Result<Option<Caller>, Error> {
        let Some((token_id, secret)) = auth::split_bearer(bearer.trim()) else { return Ok(None) };
        let (token, principal) = match self.tokens.get(&self.store, &token_id) {
            Ok(found) => {
                cairn_telemetry::metrics::token_lookup("cache");
                found
            }
            Err(ticket) => {
                cairn_telemetry::metrics::token_lookup("database");
                let Some(found) = accounts::get_token(self.store.pool(), &token_id).await? else { return Ok(None) };
                if let Some(ticket) = ticket {
                    self.tokens.keep(ticket, &found);
                }
                found
            }
        };
        if !auth::secret_matches(secret, &token.secret_hash) {
            return Ok(None);
        }
        self.caller_of(token, principal).await
    }

    /// The caller of a token found by id or sign-in: `None` when it is revoked or expired. Records its use.
    pub(super) async fn caller_of(&self, token: TokenRow, principal: PrincipalRow) -> Result<Option<Caller>, Error> {
        let now = now_ms();
        if token.revoked_at.is_some() || token.expires_at.is_some_and(|at| at <= now) {
            return Ok(None);
        }
        if token.last_used_at.is_none_or(|at| at < now - LAST_USED_GRANULARITY) {
            accounts::touch_token(self.store.pool(), &token.id, now, LAST_USED_GRANULARITY).await?;
            self.tokens.used(&token.id, now);
        }
        let scopes = token.scopes.split_whitespace().filter_map(|s| Scope::parse(s).ok()).collect();
        Ok(Some(Caller {
            principal_id: principal.id,
            display_name: principal.display_name,
            kind: Kind::parse(&principal.kind)?,
            home_account_id: principal.home_account_id,
            scopes,
        }))
    }

    /// The local user of `cairn work mcp` acting as `kind` (account `acc_local`, every scope), made on first use.
    pub async fn local_caller(&self, kind: Kind) -> Result<Caller, Error> {
        let pool = self.store.pool();
        let now = now_ms();
        accounts::ensure_account(
            pool,
            &AccountRow { id: LOCAL_ACCOUNT.into(), name: "local".into(), default_repository: String::new(), created_at: now },
        )
        .await?;
        let principal = PrincipalRow {
            id: format!("prn_local_{kind}"),
            home_account_id: LOCAL_ACCOUNT.into(),
            kind: kind.as_str().into(),
            display_name: format!("local {kind}"),
            created_at: now,
        };
        accounts::ensure_principal(pool, &principal).await?;
        Ok(Caller {
            principal_id: principal.id,
            display_name: principal.display_name,
            kind,
            home_account_id: LOCAL_ACCOUNT.into(),
            scopes: Scope::ALL.to_vec(),
        })
    }
}
