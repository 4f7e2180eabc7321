//! CSRF protection for every state-changing request the web UI makes (signed double-submit tokens).
//!
//! A browser gets a random `cairn_csrf` cookie (HttpOnly, SameSite=Strict) on its first page. Every form carries
//! `csrf = HMAC-SHA256(process key, cookie)`; a POST is accepted only when that field matches the cookie it came
//! with. A page on another site can neither read the cookie nor compute the token, and the Host/Origin guard in
//! front of every route refuses foreign `Origin`s as well. The key is random per process, so tokens die with it.

use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, header};
use cairn_work::auth::{hex, hmac_sha256};
use subtle::ConstantTimeEq;

/// The cookie that carries the browser's random value.
pub(crate) const COOKIE: &str = "cairn_csrf";

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

/// A browser's CSRF identity for one request: its cookie value, and whether the response must set it.
#[derive(Debug, Clone)]
pub(crate) struct Browser {
    /// The random cookie value (hex).
    pub(crate) cookie: String,
    /// False when the request already carried it.
    pub(crate) fresh: bool,
}

impl Browser {
    /// The `Set-Cookie` header to send when the cookie is new.
    pub(crate) fn set_cookie(&self) -> Option<HeaderValue> {
        self.fresh
            .then(|| HeaderValue::from_str(&format!("{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict", self.cookie)).ok())
            .flatten()
    }
}

impl Csrf {
    /// A fresh random key.
    pub(crate) fn new() -> Csrf {
        Csrf { key: Arc::new(random_bytes()) }
    }

    /// The browser behind `headers`: its cookie, or a new random one.
    pub(crate) fn browser(&self, headers: &HeaderMap) -> Browser {
        match cookie(headers, COOKIE).filter(|v| v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit())) {
            Some(value) => Browser { cookie: value, fresh: false },
            None => Browser { cookie: hex(&random_bytes()), fresh: true },
        }
    }

    /// The form token for `browser`.
    pub(crate) fn token(&self, browser: &Browser) -> String {
        hex(&hmac_sha256(self.key.as_slice(), browser.cookie.as_bytes()))
    }

    /// Whether `token` (a form field) is the one for the cookie `headers` carry.
    pub(crate) fn verify(&self, headers: &HeaderMap, token: &str) -> bool {
        let Some(value) = cookie(headers, COOKIE) else { return false };
        let expected = hex(&hmac_sha256(self.key.as_slice(), value.as_bytes()));
        expected.as_bytes().ct_eq(token.as_bytes()).into()
    }
}

/// The value of cookie `name` in `headers`.
pub(crate) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
}

fn random_bytes() -> [u8; 32] {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system's random source is available");
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_cookie(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, HeaderValue::from_str(&format!("other=1; {COOKIE}={value}")).unwrap());
        headers
    }

    #[test]
    fn a_token_verifies_only_with_its_own_cookie_and_key() {
        let csrf = Csrf::new();
        let browser = csrf.browser(&HeaderMap::new());
        assert!(browser.fresh && browser.set_cookie().is_some());
        let token = csrf.token(&browser);
        assert!(csrf.verify(&with_cookie(&browser.cookie), &token));
        let again = csrf.browser(&with_cookie(&browser.cookie));
        assert!(!again.fresh && again.set_cookie().is_none());
        assert!(!csrf.verify(&with_cookie(&"0".repeat(64)), &token));
        assert!(!csrf.verify(&HeaderMap::new(), &token));
        assert!(!Csrf::new().verify(&with_cookie(&browser.cookie), &token));
    }
}
