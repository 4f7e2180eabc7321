//! HMAC-SHA256 signatures of HTTP bodies, one scheme for both directions: the webhooks that start runs verify it, the
//! run notifications cairn sends carry it.
//!
//! cairn's own scheme signs `"<timestamp>.<body>"` (unix seconds), so a captured request cannot be replayed later
//! with a new timestamp: headers `X-Roscoe-Timestamp` and `X-Roscoe-Signature-256: sha256=<hex>`. GitHub's
//! `X-Hub-Signature-256: sha256=<hex>` signs the body alone ([`sign_body`]). Hex digests are compared in constant time.

use sha2::{Digest, Sha256};

/// The header carrying cairn's signature.
pub const SIGNATURE_HEADER: &str = "x-roscoe-signature-256";
/// The header carrying the signed timestamp (unix seconds).
pub const TIMESTAMP_HEADER: &str = "x-roscoe-timestamp";
/// The header carrying a delivery's id (the same on every retry of one delivery).
pub const DELIVERY_HEADER: &str = "x-roscoe-delivery";
/// GitHub's signature header.
pub const GITHUB_SIGNATURE_HEADER: &str = "x-hub-signature-256";
/// GitHub's delivery id header.
pub const GITHUB_DELIVERY_HEADER: &str = "x-github-delivery";
/// How far a signed timestamp may be from the receiver's clock, in seconds.
pub const TOLERANCE_SECS: i64 = 300;

/// SHA-256's block size in bytes.
const BLOCK: usize = 64;

/// HMAC-SHA256 of `message` under `key` (RFC 2104).
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new().chain_update(pad(0x36)).chain_update(message).finalize();
    Sha256::new().chain_update(pad(0x5c)).chain_update(inner).finalize().into()
}

/// cairn's signature header value for `body` sent at `timestamp`: `sha256=<hex>` over `"<timestamp>.<body>"`.
pub fn sign(secret: &[u8], timestamp: i64, body: &[u8]) -> String {
    let mut message = format!("{timestamp}.").into_bytes();
    message.extend_from_slice(body);
    header_value(&hmac_sha256(secret, &message))
}

/// GitHub's signature header value for `body`: `sha256=<hex>` over the body alone.
pub fn sign_body(secret: &[u8], body: &[u8]) -> String {
    header_value(&hmac_sha256(secret, body))
}

/// Whether `given` (a header value) equals `expected` (one [`sign`] or [`sign_body`] made), in constant time over
/// the expected length; the `sha256=` prefix is compared case-insensitively.
pub fn matches(expected: &str, given: &str) -> bool {
    let given = given.trim();
    let (Some(given), Some(expected)) = (strip_prefix(given), strip_prefix(expected)) else {
        return false;
    };
    let given = given.to_ascii_lowercase();
    if given.len() != expected.len() {
        return false;
    }
    given.bytes().zip(expected.bytes()).fold(0u8, |diff, (a, b)| diff | (a ^ b)) == 0
}

/// Whether signed timestamp `timestamp` lies within [`TOLERANCE_SECS`] of `now` (both unix seconds).
pub fn is_fresh(timestamp: i64, now: i64) -> bool {
    (now - timestamp).abs() <= TOLERANCE_SECS
}

fn strip_prefix(value: &str) -> Option<&str> {
    value.get(..7).filter(|p| p.eq_ignore_ascii_case("sha256=")).map(|_| &value[7..])
}

fn header_value(digest: &[u8; 32]) -> String {
    let mut out = String::from("sha256=");
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_4231_vectors() {
        // Test case 2: a short key.
        let digest = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            header_value(&digest),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block is hashed first.
        let digest = hmac_sha256(&[0xaa; 131], b"Test Using Larger Than Block-Size Key - Hash Key First");
        assert_eq!(
            header_value(&digest),
            "sha256=60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn github_example() {
        // The example of GitHub's webhook documentation: secret "It's a Secret to Everybody", body "Hello, World!".
        assert_eq!(
            sign_body(b"It's a Secret to Everybody", b"Hello, World!"),
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
        );
    }

    #[test]
    fn timestamp_is_signed() {
        let signed = sign(b"s3cret", 1_700_000_000, b"{}");
        assert!(matches(&signed, &signed.to_uppercase().replacen("SHA256=", "sha256=", 1)));
        assert!(!matches(&signed, &sign(b"s3cret", 1_700_000_001, b"{}")));
        assert!(!matches(&signed, &sign(b"other", 1_700_000_000, b"{}")));
        assert!(!matches(&signed, "sha256="));
        assert!(!matches(&signed, "md5=abc"));
        assert!(is_fresh(1_000, 1_300) && !is_fresh(1_000, 1_301) && is_fresh(1_300, 1_000));
    }
}
