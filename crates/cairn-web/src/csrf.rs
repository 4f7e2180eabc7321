//! CSRF protection for every state-changing form of the web UI: form tokens bound to the browser's sign-in.
//!
//! Every form carries `csrf = HMAC-SHA256(process key, sign-in)`, where the sign-in is the secret of the browser's
//! `cairn_session` cookie (HttpOnly: no page can read it) and, for a browser without one, a fixed word; a POST is
//! accepted only with the token of the sign-in it comes with. So a token is worth nothing without its sign-in: one
//! read from `/signin` by any process of the host, or made for another browser, does not work in a signed-in browser,
//! and no cookie that a page of another port of the host could set (cookies ignore ports) makes one work. The token
//! of no sign-in, which the local person of a loopback server uses, is one any process of the host can read (it is
//! that person already); a page of another origin cannot, and the Origin guard in front of every route refuses its
//! requests anyway. The key is random per process, so tokens die with it.

use std::sync::Arc;

use axum::http::HeaderMap;
use cairn_work::auth::{hex, hmac_sha256};
use subtle::ConstantTimeEq;

use crate::access::{SIGN_IN_COOKIE, cookie};

/// The per-process key.
#[derive(Clone)]
pub(crate) struct Csrf {
    key: Arc<[u8; 32]>,
}

impl std::fmt::Debug for Csrf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Csrf(..)")
    }
}

impl Csrf {
    /// A fresh random key.
    pub(crate) fn new() -> Csrf {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the operating system's random source is available");
        Csrf { key: Arc::new(key) }
    }

    /// The form token of the browser behind `headers`: of its sign-in, or of no sign-in.
    pub(crate) fn token(&self, headers: &HeaderMap) -> String {
        let binding = match cookie(headers, SIGN_IN_COOKIE).filter(|secret| !secret.is_empty()) {
            Some(secret) => format!("sign-in {secret}"),
            None => "no sign-in".to_owned(),
        };
        hex(&hmac_sha256(self.key.as_slice(), binding.as_bytes()))
    }

    /// Whether `token` (a form field) is the form token of the browser behind `headers`.
    pub(crate) fn verify(&self, headers: &HeaderMap, token: &str) -> bool {
        self.token(headers).as_bytes().ct_eq(token.as_bytes()).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderValue, header};

    fn with_cookie(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn a_token_verifies_only_with_its_own_sign_in_and_key() {
        let csrf = Csrf::new();
        let ada = with_cookie("cairn_csrf=planted; cairn_session=ada-secret");
        let token = csrf.token(&ada);
        assert!(csrf.verify(&ada, &token));
        assert!(csrf.verify(&with_cookie("cairn_session=ada-secret; other=1"), &token), "other cookies do not matter");
        assert!(!csrf.verify(&with_cookie("cairn_session=bob-secret"), &token), "another sign-in's");
        assert!(!csrf.verify(&HeaderMap::new(), &token), "no sign-in's");
        assert!(!Csrf::new().verify(&ada, &token), "another process's");
        let nobody = csrf.token(&HeaderMap::new());
        assert!(csrf.verify(&with_cookie("cairn_session="), &nobody), "an empty sign-in cookie is none");
        assert!(!csrf.verify(&ada, &nobody), "the token of no sign-in is refused with a sign-in");
        assert!(!csrf.verify(&ada, ""));
    }
}
