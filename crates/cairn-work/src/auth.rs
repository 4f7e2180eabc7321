//! Who is calling: principal kinds, scopes and bearer tokens (§3).
//!
//! A token is `cairn_<26 characters>_<secret>`: the 26 characters are the public token id (`tok_…` in the store), the
//! secret is 32 random bytes in base64url. Only the SHA-256 of the secret is stored, and it is compared in constant
//! time. A [`Caller`] is what an authenticated request carries into every operation: the principal, its kind, its
//! home account and the scopes of its token.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use cairn_mcp::access::Access;

use crate::error::Error;

/// What a principal is. Only a person may mark done what someone else holds, or claim what was handed to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A human.
    Person,
    /// An AI agent (also every token an MCP client obtains, unless a person's token says otherwise).
    Agent,
    /// A CI or roll script; treated like an agent.
    Service,
}

impl Kind {
    /// `person`, `agent` or `service`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Person => "person",
            Kind::Agent => "agent",
            Kind::Service => "service",
        }
    }

    /// Parses `person`, `agent` or `service`.
    pub fn parse(text: &str) -> Result<Kind, Error> {
        match text {
            "person" => Ok(Kind::Person),
            "agent" => Ok(Kind::Agent),
            "service" => Ok(Kind::Service),
            other => Err(Error::InvalidArgument(format!("kind '{other}' is not person, agent or service"))),
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

pub use cairn_mcp::access::Scope;

/// What a work tool that only reads needs.
pub const WORK_READ: [Scope; 2] = [Scope::McpRead, Scope::DecisionsRead];
/// What a work tool that changes something needs.
pub const WORK_WRITE: [Scope; 2] = [Scope::McpWrite, Scope::DecisionsWrite];

/// The authenticated caller of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The principal behind the token.
    pub principal_id: String,
    /// Its name for people.
    pub display_name: String,
    /// Person, agent or service.
    pub kind: Kind,
    /// The account an empty `account_id` means.
    pub home_account_id: String,
    /// The scopes the token holds, as granted.
    pub scopes: Vec<Scope>,
}

impl Caller {
    /// Whether the token holds `scope`, directly or through the write scope that implies it.
    pub fn holds(&self, scope: Scope) -> bool {
        cairn_mcp::access::holds_all(&self.scopes, &[scope])
    }

    /// Ok when the token holds every scope of `needed`, else `insufficient_scope` naming `tool`.
    pub fn require(&self, tool: &str, needed: &[Scope]) -> Result<(), Error> {
        if needed.iter().all(|s| self.holds(*s)) {
            return Ok(());
        }
        Err(Error::InsufficientScope { tool: tool.to_owned(), needed: needed.to_vec(), has: self.scopes.clone() })
    }

    /// `Ada (person)`: how results name who did something.
    pub fn label(&self) -> String {
        format!("{} ({})", self.display_name, self.kind)
    }

    /// The same caller in the terms every surface understands.
    pub fn access(&self) -> Access {
        Access { principal_id: self.principal_id.clone(), name: self.label(), scopes: self.scopes.clone() }
    }

    /// Whether the caller is a person.
    pub fn is_person(&self) -> bool {
        self.kind == Kind::Person
    }
}

/// A newly minted token: the bearer text (shown once) and what the store keeps.
#[derive(Debug, Clone)]
pub(crate) struct Minted {
    /// `cairn_<id>_<secret>`.
    pub(crate) bearer: String,
    /// `tok_<id>`.
    pub(crate) token_id: String,
    /// Hex SHA-256 of the secret.
    pub(crate) secret_hash: String,
}

/// Mints a token whose id part is the 26 characters after the prefix of `token_id` (`tok_…`).
pub(crate) fn mint(token_id: &str) -> Minted {
    let mut secret = [0u8; 32];
    crate::ids::fill_random(&mut secret);
    let secret = URL_SAFE_NO_PAD.encode(secret);
    let id_part = token_id.trim_start_matches("tok_");
    Minted {
        bearer: format!("cairn_{id_part}_{secret}"),
        token_id: token_id.to_owned(),
        secret_hash: hash_secret(&secret),
    }
}

/// Splits a bearer token into its store id (`tok_…`) and secret; None when it is not shaped like one of ours.
pub(crate) fn split_bearer(bearer: &str) -> Option<(String, &str)> {
    let rest = bearer.strip_prefix("cairn_")?;
    let (id, secret) = rest.split_once('_')?;
    if id.len() != 26 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) || secret.is_empty() {
        return None;
    }
    Some((format!("tok_{id}"), secret))
}

/// Hex SHA-256 of a secret.
pub(crate) fn hash_secret(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

/// Whether `secret` hashes to `stored_hash`, compared in constant time.
pub(crate) fn secret_matches(secret: &str, stored_hash: &str) -> bool {
    hash_secret(secret).as_bytes().ct_eq(stored_hash.as_bytes()).into()
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// HMAC-SHA256 (RFC 2104) of `message` under `key` (for page tokens here, CSRF tokens in the web UI).
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let inner_pad: Vec<u8> = block.iter().map(|b| b ^ 0x36).collect();
    let outer_pad: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
    let inner = Sha256::new().chain_update(&inner_pad).chain_update(message).finalize();
    Sha256::new().chain_update(&outer_pad).chain_update(inner).finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(scopes: &[Scope]) -> Caller {
        Caller {
            principal_id: "prn_1".into(),
            display_name: "Ada".into(),
            kind: Kind::Person,
            home_account_id: "acc_1".into(),
            scopes: scopes.to_vec(),
        }
    }

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(hex(&mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }

    #[test]
    fn minted_tokens_split_back_and_match_only_their_secret() {
        let minted = mint("tok_01J9Z3K6Q8V2M4N7P1R5S0T2XA");
        let (id, secret) = split_bearer(&minted.bearer).unwrap();
        assert_eq!(id, minted.token_id);
        assert!(secret_matches(secret, &minted.secret_hash));
        assert!(!secret_matches("nope", &minted.secret_hash));
        assert!(split_bearer("Bearer x").is_none() && split_bearer("cairn_short_x").is_none());
    }

    #[test]
    fn scopes_parse_imply_and_name_what_is_missing() {
        assert_eq!(Scope::parse_list("decisions:read, mcp:read mcp:read").unwrap(), WORK_READ.to_vec());
        assert!(caller(&WORK_WRITE).require("work_list", &WORK_READ).is_ok());
        let err = caller(&WORK_READ).require("work_update", &WORK_WRITE).unwrap_err();
        assert_eq!(
            err.to_string(),
            "work_update needs scopes mcp:write, decisions:write; this token has mcp:read, decisions:read"
        );
        assert_eq!(err.code(), "insufficient_scope");
    }
}
