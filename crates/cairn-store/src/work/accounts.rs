//! Accounts (tenants), principals (who a token speaks for), memberships (which accounts a principal may use) and
//! tokens (only the hash of a secret, its scopes, expiry and revocation).

use sqlx::any::AnyRow;
use sqlx::{Any, AssertSqlSafe, Executor, Row};

use super::opt_i64;
use crate::changes::{self, Change};
use crate::{Error, Store};

/// A principal, as [`principal`] reads it.
macro_rules! principal_select {
    () => {
        "SELECT id, home_account_id, kind, display_name, created_at FROM work_principals"
    };
}

/// A token and its principal, as [`token_and_principal`] reads them.
macro_rules! token_and_principal_select {
    () => {
        "SELECT t.id, t.principal_id, t.secret_hash, t.scopes, t.created_at, t.expires_at, t.revoked_at, \
         t.last_used_at, p.home_account_id, p.kind, p.display_name, p.created_at AS principal_created_at \
         FROM work_tokens t JOIN work_principals p ON p.id = t.principal_id"
    };
}

/// A row of `work_accounts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountRow {
    /// `acc_…`.
    pub id: String,
    /// A name for people.
    pub name: String,
    /// `owner/name` that `work_status` uses when a call names no repository; "" for none.
    pub default_repository: String,
    /// Epoch ms.
    pub created_at: i64,
}

/// A row of `work_principals`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrincipalRow {
    /// `prn_…`.
    pub id: String,
    /// The account the principal belongs to (its own, used when a call leaves `account_id` empty).
    pub home_account_id: String,
    /// `person`, `agent` or `service`.
    pub kind: String,
    /// A name for people.
    pub display_name: String,
    /// Epoch ms.
    pub created_at: i64,
}

/// A row of `work_tokens`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    /// `tok_…`, the public half of the bearer secret.
    pub id: String,
    /// Whom the token speaks for.
    pub principal_id: String,
    /// Hex SHA-256 of the secret half.
    pub secret_hash: String,
    /// Space-separated scopes.
    pub scopes: String,
    /// Epoch ms.
    pub created_at: i64,
    /// Epoch ms after which the token is refused.
    pub expires_at: Option<i64>,
    /// Epoch ms it was revoked at.
    pub revoked_at: Option<i64>,
    /// Epoch ms of its last use (updated at most once a minute).
    pub last_used_at: Option<i64>,
}

/// Inserts an account.
pub async fn insert_account<'e, E: Executor<'e, Database = Any>>(db: E, row: &AccountRow) -> Result<(), Error> {
    write_account(db, row, "").await
}

/// Inserts an account unless one with its id exists (for the fixed local account of stdio use).
pub async fn ensure_account<'e, E: Executor<'e, Database = Any>>(db: E, row: &AccountRow) -> Result<(), Error> {
    write_account(db, row, " ON CONFLICT (id) DO NOTHING").await
}

/// Inserts `row` into `work_accounts`, the insert ending with `on_conflict` (a fixed clause, or "").
async fn write_account<'e, E: Executor<'e, Database = Any>>(
    db: E,
    row: &AccountRow,
    on_conflict: &'static str,
) -> Result<(), Error> {
    let sql = format!(
        "INSERT INTO work_accounts (id, name, default_repository, created_at) VALUES ($1, $2, $3, $4){on_conflict}"
    );
    sqlx::query(AssertSqlSafe(sql))
        .bind(&row.id)
        .bind(&row.name)
        .bind(&row.default_repository)
        .bind(row.created_at)
        .execute(db)
        .await?;
    Ok(())
}

/// The account `id`, if it exists.
pub async fn get_account<'e, E: Executor<'e, Database = Any>>(db: E, id: &str) -> Result<Option<AccountRow>, Error> {
    let row = sqlx::query("SELECT id, name, default_repository, created_at FROM work_accounts WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?;
    row.as_ref().map(account).transpose()
}

/// Every account, oldest first.
pub async fn list_accounts<'e, E: Executor<'e, Database = Any>>(db: E) -> Result<Vec<AccountRow>, Error> {
    let rows = sqlx::query("SELECT id, name, default_repository, created_at FROM work_accounts ORDER BY created_at, id")
        .fetch_all(db)
        .await?;
    rows.iter().map(account).collect()
}

/// An account from a row of `work_accounts`.
fn account(row: &AnyRow) -> Result<AccountRow, Error> {
    Ok(AccountRow {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        default_repository: row.try_get("default_repository")?,
        created_at: row.try_get("created_at")?,
    })
}

/// Sets an account's default repository; false when there is no such account.
pub async fn set_default_repository<'e, E: Executor<'e, Database = Any>>(
    db: E,
    id: &str,
    repository: &str,
) -> Result<bool, Error> {
    let done = sqlx::query("UPDATE work_accounts SET default_repository = $1 WHERE id = $2")
        .bind(repository)
        .bind(id)
        .execute(db)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Inserts a principal unless one with its id, or its account, name and kind, exists.
pub async fn ensure_principal<'e, E: Executor<'e, Database = Any>>(db: E, row: &PrincipalRow) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO work_principals (id, home_account_id, kind, display_name, created_at) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT DO NOTHING",
    )
    .bind(&row.id)
    .bind(&row.home_account_id)
    .bind(&row.kind)
    .bind(&row.display_name)
    .bind(row.created_at)
    .execute(db)
    .await?;
    Ok(())
}

fn principal(row: AnyRow) -> Result<PrincipalRow, Error> {
    Ok(PrincipalRow {
        id: row.try_get("id")?,
        home_account_id: row.try_get("home_account_id")?,
        kind: row.try_get("kind")?,
        display_name: row.try_get("display_name")?,
        created_at: row.try_get("created_at")?,
    })
}

/// The principal `id`.
pub async fn get_principal<'e, E: Executor<'e, Database = Any>>(db: E, id: &str) -> Result<Option<PrincipalRow>, Error> {
    sqlx::query(concat!(principal_select!(), " WHERE id = $1"))
        .bind(id)
        .fetch_optional(db)
        .await?
        .map(principal)
        .transpose()
}

/// The principal of `account` with this display name and kind.
pub async fn find_principal<'e, E: Executor<'e, Database = Any>>(
    db: E,
    account: &str,
    display_name: &str,
    kind: &str,
) -> Result<Option<PrincipalRow>, Error> {
    sqlx::query(concat!(
        principal_select!(),
        " WHERE home_account_id = $1 AND display_name = $2 AND kind = $3"
    ))
    .bind(account)
    .bind(display_name)
    .bind(kind)
    .fetch_optional(db)
    .await?
    .map(principal)
    .transpose()
}

/// Gives `principal` a role in `account`, replacing any role it had there.
pub async fn put_membership<'e, E: Executor<'e, Database = Any>>(
    db: E,
    account: &str,
    principal: &str,
    role: &str,
) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO work_memberships (account_id, principal_id, role) VALUES ($1, $2, $3) \
         ON CONFLICT (account_id, principal_id) DO UPDATE SET role = excluded.role",
    )
    .bind(account)
    .bind(principal)
    .bind(role)
    .execute(db)
    .await?;
    Ok(())
}

/// Makes `principal` the owner of `account` when the account has no owner yet (one statement, so two first people
/// made at once cannot both become owners on SQLite); true when it did.
pub async fn put_first_owner<'e, E: Executor<'e, Database = Any>>(
    db: E,
    account: &str,
    principal: &str,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO work_memberships (account_id, principal_id, role) SELECT $1, $2, 'owner' \
         WHERE NOT EXISTS (SELECT 1 FROM work_memberships WHERE account_id = $3 AND role = 'owner') \
         ON CONFLICT (account_id, principal_id) DO NOTHING",
    )
    .bind(account)
    .bind(principal)
    .bind(account)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The role `principal` has in `account`, if any.
pub async fn membership_role<'e, E: Executor<'e, Database = Any>>(
    db: E,
    account: &str,
    principal: &str,
) -> Result<Option<String>, Error> {
    let row = sqlx::query("SELECT role FROM work_memberships WHERE account_id = $1 AND principal_id = $2")
        .bind(account)
        .bind(principal)
        .fetch_optional(db)
        .await?;
    Ok(row.map(|row| row.try_get("role")).transpose()?)
}

/// Inserts a token.
pub async fn insert_token<'e, E: Executor<'e, Database = Any>>(db: E, row: &TokenRow) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO work_tokens (id, principal_id, secret_hash, scopes, created_at, expires_at, revoked_at, last_used_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&row.id)
    .bind(&row.principal_id)
    .bind(&row.secret_hash)
    .bind(&row.scopes)
    .bind(row.created_at)
    .bind(row.expires_at)
    .bind(row.revoked_at)
    .bind(row.last_used_at)
    .execute(db)
    .await?;
    Ok(())
}

/// The token `id`, revoked or not, and the principal it speaks for (one query: every authenticated request asks).
pub async fn get_token<'e, E: Executor<'e, Database = Any>>(
    db: E,
    id: &str,
) -> Result<Option<(TokenRow, PrincipalRow)>, Error> {
    let row = sqlx::query(concat!(token_and_principal_select!(), " WHERE t.id = $1"))
    .bind(id)
    .fetch_optional(db)
    .await?;
    row.as_ref().map(token_and_principal).transpose()
}

/// Every token (revoked and expired ones too) of the principals whose home is `account` (every account when
/// `None`), with its principal, oldest first.
pub async fn list_tokens<'e, E: Executor<'e, Database = Any>>(
    db: E,
    account: Option<&str>,
) -> Result<Vec<(TokenRow, PrincipalRow)>, Error> {
    let rows = match account {
        Some(account) => {
            sqlx::query(concat!(
                token_and_principal_select!(),
                " WHERE p.home_account_id = $1 ORDER BY t.created_at, t.id"
            ))
            .bind(account)
            .fetch_all(db)
            .await?
        }
        None => sqlx::query(concat!(token_and_principal_select!(), " ORDER BY t.created_at, t.id")).fetch_all(db).await?,
    };
    rows.iter().map(token_and_principal).collect()
}

fn token_and_principal(row: &AnyRow) -> Result<(TokenRow, PrincipalRow), Error> {
    let token = TokenRow {
        id: row.try_get("id")?,
        principal_id: row.try_get("principal_id")?,
        secret_hash: row.try_get("secret_hash")?,
        scopes: row.try_get("scopes")?,
        created_at: row.try_get("created_at")?,
        expires_at: opt_i64(row, "expires_at")?,
        revoked_at: opt_i64(row, "revoked_at")?,
        last_used_at: opt_i64(row, "last_used_at")?,
    };
    let principal = PrincipalRow {
        id: token.principal_id.clone(),
        home_account_id: row.try_get("home_account_id")?,
        kind: row.try_get("kind")?,
        display_name: row.try_get("display_name")?,
        created_at: row.try_get("principal_created_at")?,
    };
    Ok((token, principal))
}

/// Revokes token `id` at `now`, announcing [`Change::Token`] on the changes feed (on Postgres inside the transaction,
/// so every node hears of it exactly when it commits); false when there is no such token or it was already revoked.
pub async fn revoke_token(store: &Store, id: &str, now: i64) -> Result<bool, Error> {
    let mut tx = store.begin_write().await?;
    let done = sqlx::query("UPDATE work_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    let revoked = done.rows_affected() == 1;
    if revoked {
        changes::announce(&mut tx, &Change::Token(id.to_owned())).await?;
    }
    tx.commit().await?;
    if revoked {
        store.changes().announced(Change::Token(id.to_owned()));
    }
    Ok(revoked)
}

/// Records that token `id` was used at `now`, unless that was already recorded within `granularity` ms (so busy
/// tokens do not write on every request).
pub async fn touch_token<'e, E: Executor<'e, Database = Any>>(
    db: E,
    id: &str,
    now: i64,
    granularity: i64,
) -> Result<(), Error> {
    sqlx::query("UPDATE work_tokens SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)")
        .bind(now)
        .bind(id)
        .bind(now - granularity)
        .execute(db)
        .await?;
    Ok(())
}
