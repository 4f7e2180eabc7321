//! What an account's owners do from the web UI's settings page: see the accounts they own with every token of their
//! principals (never a secret), create a token, revoke one. Each of these needs a credential with the `admin` scope
//! and the `owner` membership of the account (an account's first person has it; `cairn work account add-member --role
//! owner` gives it to others), and a new token holds no scope its maker lacks. The local person — who runs the server
//! and holds the CLI anyway — holds every scope and owns every account.

use cairn_store::work::accounts::{self, AccountRow};
use serde::Serialize;

use super::Service;
use super::admin::{LOCAL_PERSON, NewToken, TokenInfo};
use crate::auth::{Caller, Kind, Scope};
use crate::error::Error;

/// An account its caller owns, with its tokens.
#[derive(Debug, Clone, Serialize)]
pub struct OwnedAccount {
    /// `acc_…`.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its tokens, newest first.
    pub tokens: Vec<TokenInfo>,
}

impl Service {
    /// Whether `caller` owns account `account_id`.
    async fn owns(&self, caller: &Caller, account_id: &str) -> Result<bool, Error> {
        if caller.principal_id == LOCAL_PERSON {
            return Ok(true);
        }
        let role = accounts::membership_role(self.store.pool(), account_id, &caller.principal_id).await?;
        Ok(role.as_deref() == Some("owner"))
    }

    /// The accounts `caller` owns, each with its tokens; none when its credential lacks `admin`.
    pub async fn owned_accounts(&self, caller: &Caller) -> Result<Vec<OwnedAccount>, Error> {
        let mut owned = Vec::new();
        if !caller.holds(Scope::Admin) {
            return Ok(owned);
        }
        for account in accounts::list_accounts(self.store.pool()).await? {
            if !self.owns(caller, &account.id).await? {
                continue;
            }
            let mut tokens = self.list_tokens(Some(&account.id)).await?;
            tokens.reverse();
            let AccountRow { id, name, .. } = account;
            owned.push(OwnedAccount { id, name, tokens });
        }
        Ok(owned)
    }

    /// A new token in account `account_id`, made by one of its owners with `admin`, holding only scopes the maker
    /// holds (see [`Service::create_token`]).
    pub async fn create_token_as_owner(
        &self,
        caller: &Caller,
        account_id: &str,
        principal: &str,
        kind: &str,
        scopes: &[String],
    ) -> Result<NewToken, Error> {
        let kind = Kind::parse(kind.trim())?;
        let scopes = scopes.iter().map(|s| Scope::parse(s.trim())).collect::<Result<Vec<_>, _>>().map_err(Error::InvalidArgument)?;
        caller.require("creating a token", &[Scope::Admin])?;
        let beyond: Vec<&str> = scopes.iter().filter(|s| !caller.holds(**s)).map(|s| s.as_str()).collect();
        if !beyond.is_empty() {
            return Err(Error::PermissionDenied(format!(
                "a token holds only scopes its maker holds; yours lacks {}: leave them out",
                beyond.join(", ")
            )));
        }
        if !self.owns(caller, account_id).await? {
            return Err(Error::PermissionDenied(format!("only an owner of account '{account_id}' makes its tokens")));
        }
        self.create_token(account_id, principal, kind, &scopes, None).await
    }

    /// Revokes token `token_id` of an account `caller` owns, with `admin`; false when it was revoked before.
    pub async fn revoke_token_as_owner(&self, caller: &Caller, token_id: &str) -> Result<bool, Error> {
        caller.require("revoking a token", &[Scope::Admin])?;
        let (_, principal) = accounts::get_token(self.store.pool(), token_id.trim())
            .await?
            .ok_or_else(|| Error::not_found("token", token_id))?;
        if !self.owns(caller, &principal.home_account_id).await? {
            return Err(Error::PermissionDenied(format!(
                "only an owner of account '{}' revokes its tokens",
                principal.home_account_id
            )));
        }
        self.revoke_token(token_id).await
    }
}
