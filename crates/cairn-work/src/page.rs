//! Page sizes and signed keyset page tokens (§2.6).
//!
//! A token is `base64url(payload) . base64url(HMAC-SHA256(key, payload))` where the payload is JSON
//! `{"v":1,"f":<hash of the query's filters>,"a":<the last row's sort key>}`. The key is the server's, kept in the
//! database so every process sharing it accepts every other's tokens. A token that was tampered with, made by another
//! server, or used with other filters (another account, space, state …) is refused as `invalid_argument`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::auth::hmac_sha256;
use crate::error::Error;

/// The default page size (`page_size` 0).
const DEFAULT_PAGE_SIZE: i64 = 50;
/// The largest page size.
const MAX_PAGE_SIZE: i64 = 200;

/// `page_size` checked: 0 means 50, 1 to 200 as given, anything else refused.
pub(crate) fn page_size(requested: i64) -> Result<i64, Error> {
    match requested {
        0 => Ok(DEFAULT_PAGE_SIZE),
        1..=MAX_PAGE_SIZE => Ok(requested),
        n if n < 0 => Err(Error::InvalidArgument(format!("page_size must be 0 (for 50) to 200; it is {n}"))),
        _ => Err(Error::InvalidArgument(format!("page_size is at most 200; it is {requested}"))),
    }
}

/// The server's key for signing page tokens.
#[derive(Clone)]
pub(crate) struct PageKey([u8; 32]);

impl std::fmt::Debug for PageKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PageKey(..)")
    }
}

impl PageKey {
    /// A key from its stored hex form; None when it is not 64 hex digits.
    pub(crate) fn from_hex(text: &str) -> Option<PageKey> {
        if text.len() != 64 {
            return None;
        }
        let mut key = [0u8; 32];
        for (i, byte) in key.iter_mut().enumerate() {
            *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(PageKey(key))
    }

    /// A fresh random key in hex.
    pub(crate) fn generate_hex() -> String {
        let mut key = [0u8; 32];
        crate::ids::fill_random(&mut key);
        crate::auth::hex(&key)
    }

    /// A token continuing the query whose filters are `filters` after the row whose sort key is `after`.
    pub(crate) fn sign(&self, filters: &Value, after: Value) -> String {
        let payload = json!({"v": 1, "f": filter_hash(filters), "a": after}).to_string();
        let mac = hmac_sha256(&self.0, payload.as_bytes());
        format!("{}.{}", URL_SAFE_NO_PAD.encode(payload), URL_SAFE_NO_PAD.encode(mac))
    }

    /// The sort key a token continues after, if it is ours, untouched and made for these `filters`.
    pub(crate) fn verify(&self, token: &str, filters: &Value) -> Result<Value, Error> {
        let refuse = || {
            Error::InvalidArgument(
                "page_token does not belong to this query: pass the next_page_token of the page before, with the same \
                 filters, or leave it empty for the first page"
                    .into(),
            )
        };
        let (payload, mac) = token.split_once('.').ok_or_else(refuse)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| refuse())?;
        let mac = URL_SAFE_NO_PAD.decode(mac).map_err(|_| refuse())?;
        let expected = hmac_sha256(&self.0, &payload);
        if !bool::from(expected.as_slice().ct_eq(mac.as_slice())) {
            return Err(refuse());
        }
        let payload: Value = serde_json::from_slice(&payload).map_err(|_| refuse())?;
        if payload["v"] != 1 || payload["f"] != filter_hash(filters) {
            return Err(refuse());
        }
        Ok(payload["a"].clone())
    }
}

/// A short hash of a query's filters.
fn filter_hash(filters: &Value) -> String {
    crate::auth::hex(&Sha256::digest(filters.to_string().as_bytes())[..16])
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use proptest::sample::Index;

    use super::*;

    #[test]
    fn page_sizes() {
        assert_eq!(page_size(0).unwrap(), 50);
        assert_eq!(page_size(200).unwrap(), 200);
        assert!(page_size(201).unwrap_err().to_string().contains("at most 200"));
        assert!(page_size(-1).is_err());
    }

    #[test]
    fn tokens_verify_only_untouched_for_their_filters_and_key() {
        let key = PageKey::from_hex(&PageKey::generate_hex()).unwrap();
        let filters = json!({"account": "acc_1", "state": ""});
        let token = key.sign(&filters, json!([5, "wi_x"]));
        assert_eq!(key.verify(&token, &filters).unwrap(), json!([5, "wi_x"]));
        assert!(key.verify(&token, &json!({"account": "acc_2", "state": ""})).is_err());
        let other = PageKey::from_hex(&PageKey::generate_hex()).unwrap();
        assert!(other.verify(&token, &filters).is_err());
        let (payload, mac) = token.split_once('.').unwrap();
        let forged = URL_SAFE_NO_PAD.encode(
            String::from_utf8(URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap().replace('5', "9"),
        );
        assert!(key.verify(&format!("{forged}.{mac}"), &filters).is_err());
        assert!(key.verify("garbage", &filters).is_err());
    }

    /// A key for the property tests (the same each run, so a failure can be replayed).
    fn test_key() -> PageKey {
        PageKey::from_hex(&"5a".repeat(32)).unwrap()
    }

    /// Asserts `token` is refused with the sentence that says what to do.
    fn refused(token: &str, filters: &Value) -> Result<(), TestCaseError> {
        match test_key().verify(token, filters) {
            Err(Error::InvalidArgument(message)) => {
                prop_assert!(message.starts_with("page_token does not belong to this query"), "{}", message);
                Ok(())
            }
            other => Err(TestCaseError::fail(format!("{token:?} was not refused: {other:?}"))),
        }
    }

    /// Filters and sort keys of the shapes the list tools use.
    fn filters() -> impl Strategy<Value = Value> {
        ("[a-z_0-9]{0,12}", "[a-z]{0,8}").prop_map(|(account, state)| json!({"account": account, "state": state}))
    }

    fn after() -> impl Strategy<Value = Value> {
        (any::<i64>(), "[a-z_0-9]{0,16}").prop_map(|(at, id)| json!([at, id]))
    }

    /// The characters of tokens (base64url and the dot), and some of standard base64 and padding.
    const TOKEN_CHARS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/";

    /// A change to a token's text.
    #[derive(Debug, Clone)]
    enum Mutation {
        Replace(Index, char),
        Insert(Index, char),
        Remove(Index),
        Truncate(Index),
        SwapHalves,
        /// The payload re-encoded with a different sort key, the signature kept.
        Forge(i64),
    }

    fn mutation() -> impl Strategy<Value = Mutation> {
        let char = prop_oneof![
            prop::sample::select(TOKEN_CHARS.chars().collect::<Vec<_>>()),
            any::<char>(),
        ];
        prop_oneof![
            (any::<Index>(), char.clone()).prop_map(|(at, c)| Mutation::Replace(at, c)),
            (any::<Index>(), char).prop_map(|(at, c)| Mutation::Insert(at, c)),
            any::<Index>().prop_map(Mutation::Remove),
            any::<Index>().prop_map(Mutation::Truncate),
            Just(Mutation::SwapHalves),
            any::<i64>().prop_map(Mutation::Forge),
        ]
    }

    fn mutate(token: &str, mutation: &Mutation) -> String {
        let mut chars: Vec<char> = token.chars().collect();
        match mutation {
            Mutation::Replace(at, c) if !chars.is_empty() => {
                let at = at.index(chars.len());
                chars[at] = *c;
            }
            Mutation::Insert(at, c) => chars.insert(at.index(chars.len() + 1), *c),
            Mutation::Remove(at) if !chars.is_empty() => {
                chars.remove(at.index(chars.len()));
            }
            Mutation::Replace(..) | Mutation::Remove(_) => {}
            Mutation::Truncate(at) => chars.truncate(at.index(chars.len() + 1)),
            Mutation::SwapHalves => {
                return token.split_once('.').map_or(token.to_owned(), |(payload, mac)| format!("{mac}.{payload}"));
            }
            Mutation::Forge(at) => {
                // Only a token still in one piece can be forged; an earlier change may have broken it.
                let Some((payload, mac)) = token.split_once('.') else { return token.to_owned() };
                let decoded = URL_SAFE_NO_PAD.decode(payload).ok();
                let Some(mut payload) = decoded.and_then(|p| serde_json::from_slice::<Value>(&p).ok()) else {
                    return token.to_owned();
                };
                payload["a"] = json!([at, "forged"]);
                return format!("{}.{mac}", URL_SAFE_NO_PAD.encode(payload.to_string()));
            }
        }
        chars.into_iter().collect()
    }

    proptest! {
        #[test]
        fn a_signed_token_verifies_for_its_own_filters(filters in filters(), after in after()) {
            let key = test_key();
            prop_assert_eq!(key.verify(&key.sign(&filters, after.clone()), &filters).unwrap(), after);
        }

        #[test]
        fn random_text_is_refused(token in any::<String>(), filters in filters()) {
            refused(&token, &filters)?;
        }

        #[test]
        fn random_text_in_the_token_alphabet_is_refused(
            token in "[A-Za-z0-9_-]{0,80}(\\.[A-Za-z0-9_-]{0,60})?",
            filters in filters(),
        ) {
            refused(&token, &filters)?;
        }

        #[test]
        fn a_changed_token_is_refused(
            filters in filters(),
            after in after(),
            mutations in prop::collection::vec(mutation(), 1..4),
        ) {
            let token = test_key().sign(&filters, after);
            let changed = mutations.iter().fold(token.clone(), |t, m| mutate(&t, m));
            prop_assume!(changed != token);
            refused(&changed, &filters)?;
        }

        #[test]
        fn a_token_of_other_filters_or_another_key_is_refused(
            mine in filters(),
            theirs in filters(),
            after in after(),
        ) {
            prop_assume!(mine != theirs);
            refused(&test_key().sign(&theirs, after.clone()), &mine)?;
            let other = PageKey::from_hex(&"a5".repeat(32)).unwrap();
            refused(&other.sign(&mine, after), &mine)?;
        }
    }
}
