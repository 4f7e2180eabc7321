//! `web_signins`: a browser's sign-in to the web UI. The cookie carries a random secret; the row holds only its
//! SHA-256 and the token the person signed in with, so the token never goes back to the browser and revoking it ends
//! every sign-in made with it at once.

use sqlx::{Any, Executor, Row};

use super::accounts::{PrincipalRow, TokenRow, get_token};
use crate::Error;

/// Records a sign-in with token `token_id`, valid until `expires_at` (epoch ms).
pub async fn insert<'e, E: Executor<'e, Database = Any>>(
    db: E,
    secret_hash: &str,
    token_id: &str,
    now: i64,
    expires_at: i64,
) -> Result<(), Error> {
    sqlx::query("INSERT INTO web_signins (secret_hash, token_id, created_at, expires_at) VALUES ($1, $2, $3, $4)")
        .bind(secret_hash)
        .bind(token_id)
        .bind(now)
        .bind(expires_at)
        .execute(db)
        .await?;
    Ok(())
}

/// The token (revoked or not) and principal of the sign-in whose secret hashes to `secret_hash`, while it has not
/// expired at `now`.
pub async fn find(
    pool: &sqlx::AnyPool,
    secret_hash: &str,
    now: i64,
) -> Result<Option<(TokenRow, PrincipalRow)>, Error> {
    let row = sqlx::query("SELECT token_id FROM web_signins WHERE secret_hash = $1 AND expires_at > $2")
        .bind(secret_hash)
        .bind(now)
        .fetch_optional(pool)
        .await?;
    let Some(row) = row else { return Ok(None) };
    let token_id: String = row.try_get("token_id")?;
    get_token(pool, &token_id).await
}

/// Ends the sign-in whose secret hashes to `secret_hash`, and forgets every sign-in that expired before `now`.
pub async fn delete<'e, E: Executor<'e, Database = Any>>(db: E, secret_hash: &str, now: i64) -> Result<(), Error> {
    sqlx::query("DELETE FROM web_signins WHERE secret_hash = $1 OR expires_at <= $2")
        .bind(secret_hash)
        .bind(now)
        .execute(db)
        .await?;
    Ok(())
}
