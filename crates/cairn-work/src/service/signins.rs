//! Signing in to the web UI: a person pastes a token once, and the browser keeps only a random sign-in secret.
//!
//! [`Service::sign_in`] checks the token and records a sign-in (the SHA-256 of a new 32-byte secret and the token's
//! id, valid for [`SIGN_IN_TTL_MS`]); [`Service::signed_in`] finds the caller again from the secret on every request,
//! through the token, so a revoked or expired token ends the sign-in at once; [`Service::sign_out`] forgets it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use cairn_store::work::signins;

use super::Service;
use crate::auth::{self, Caller};
use crate::error::Error;
use crate::ids::fill_random;
use crate::time::now_ms;

/// How long a sign-in lasts: a working week.
pub const SIGN_IN_TTL_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// A new sign-in: the secret for the browser's cookie, and who it is.
#[derive(Debug, Clone)]
pub struct SignIn {
    /// The cookie value (43 base64url characters).
    pub secret: String,
    /// The principal signed in, with the token's scopes.
    pub caller: Caller,
}

impl Service {
    /// Checks `bearer` and records a sign-in with it; `None` when the token is malformed, unknown, expired or
    /// revoked.
    pub async fn sign_in(&self, bearer: &str) -> Result<Option<SignIn>, Error> {
        let Some(caller) = self.authenticate(bearer).await? else { return Ok(None) };
        let Some((token_id, _)) = auth::split_bearer(bearer.trim()) else { return Ok(None) };
        let mut bytes = [0u8; 32];
        fill_random(&mut bytes);
        let secret = URL_SAFE_NO_PAD.encode(bytes);
        let now = now_ms();
        signins::insert(self.store.pool(), &auth::hash_secret(&secret), &token_id, now, now + SIGN_IN_TTL_MS).await?;
        Ok(Some(SignIn { secret, caller }))
    }

    /// The caller of the sign-in with cookie `secret`; `None` when there is none, it expired, or its token was
    /// revoked or expired.
    pub async fn signed_in(&self, secret: &str) -> Result<Option<Caller>, Error> {
        if secret.is_empty() || secret.len() > 64 {
            return Ok(None);
        }
        let found = signins::find(self.store.pool(), &auth::hash_secret(secret), now_ms()).await?;
        match found {
            Some((token, principal)) => self.caller_of(token, principal).await,
            None => Ok(None),
        }
    }

    /// Ends the sign-in with cookie `secret` (and forgets expired ones).
    pub async fn sign_out(&self, secret: &str) -> Result<(), Error> {
        signins::delete(self.store.pool(), &auth::hash_secret(secret), now_ms()).await?;
        Ok(())
    }
}
