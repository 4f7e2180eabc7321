//! Whether a webhook request is signed with its hook's secret, and which delivery it is: the pure half of the
//! check, over the request's headers, its body and the server's clock.
//!
//! Two schemes (docs/roscoe/guides/webhooks.md):
//! - cairn's: `X-Roscoe-Signature-256` over `"<X-Roscoe-Timestamp>.<body>"`; the timestamp must lie within five
//!   minutes of the server's clock, so a captured request stops working soon. The delivery is `X-Roscoe-Delivery`
//!   (or `X-GitHub-Delivery`), else the signature itself: two requests with the same signature are one delivery.
//! - GitHub's: `X-Hub-Signature-256` over the body alone. Nothing signed says when it was sent, so the delivery id
//!   `X-GitHub-Delivery` is required and is what stops a replay; it is kept for good. A `X-Roscoe-Timestamp` sent
//!   beside it must be fresh too.
//!
//! A refusal says what was wrong and how to send it right, never anything of the secret.

use crate::signature::{self, TOLERANCE_SECS};

/// The headers of a webhook request that the check reads (each as its text, when sent).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WebhookHeaders {
    /// `X-Roscoe-Signature-256`.
    pub signature: Option<String>,
    /// `X-Roscoe-Timestamp`.
    pub timestamp: Option<String>,
    /// `X-Roscoe-Delivery`.
    pub delivery: Option<String>,
    /// `X-Hub-Signature-256`.
    pub github_signature: Option<String>,
    /// `X-GitHub-Delivery`.
    pub github_delivery: Option<String>,
}

impl WebhookHeaders {
    /// The headers `header` gives for each name of [`signature`]'s header constants (lower-case).
    pub fn read<'h>(header: impl Fn(&str) -> Option<&'h str>) -> WebhookHeaders {
        let get = |name: &str| header(name).map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned);
        WebhookHeaders {
            signature: get(signature::SIGNATURE_HEADER),
            timestamp: get(signature::TIMESTAMP_HEADER),
            delivery: get(signature::DELIVERY_HEADER),
            github_signature: get(signature::GITHUB_SIGNATURE_HEADER),
            github_delivery: get(signature::GITHUB_DELIVERY_HEADER),
        }
    }

    /// Refuses a request that carries a signature of neither scheme.
    pub(super) fn require_signature(&self) -> Result<(), String> {
        match self.signature.is_some() || self.github_signature.is_some() {
            true => Ok(()),
            false => Err(UNSIGNED.into()),
        }
    }
}

/// A request whose signature holds: which delivery it is, and until when (epoch ms) that must be remembered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Verified {
    /// The delivery id.
    pub(super) delivery_id: String,
    /// When a replay would fail on its stale timestamp anyway (`None`: never, so the id is kept for good).
    pub(super) expires_at: Option<i64>,
}

/// The refusal of a request without a signature.
const UNSIGNED: &str = "the request is not signed: send X-Roscoe-Signature-256 with X-Roscoe-Timestamp, or GitHub's \
                        X-Hub-Signature-256 with X-GitHub-Delivery";

/// How long a delivery signed with a timestamp is remembered past its timestamp: well past the five minutes its
/// signature holds, so servers whose clocks differ still refuse a replay.
const REMEMBERED_MS: i64 = 24 * 60 * 60 * 1000;

/// The request's delivery when `headers` sign `body` with `secret` (at `now`, unix seconds); otherwise why not.
pub(super) fn verify(headers: &WebhookHeaders, secret: &[u8], body: &[u8], now: i64) -> Result<Verified, String> {
    let timestamp = headers.timestamp.as_deref().map(|t| fresh(t, now)).transpose()?;
    if let Some(given) = &headers.signature {
        let Some(timestamp) = timestamp else {
            return Err("X-Roscoe-Signature-256 needs X-Roscoe-Timestamp, the unix time in seconds it signs \
                 (the signature is over \"<timestamp>.<body>\")"
                .into());
        };
        if !signature::matches(&signature::sign(secret, timestamp, body), given) {
            return Err(mismatch("X-Roscoe-Signature-256", "HMAC-SHA256 of \"<X-Roscoe-Timestamp>.<body>\""));
        }
        let delivery = headers.delivery.as_ref().or(headers.github_delivery.as_ref());
        let delivery_id = delivery.cloned().unwrap_or_else(|| format!("signature:{}", given.to_ascii_lowercase()));
        return Ok(Verified { delivery_id, expires_at: Some(timestamp * 1000 + REMEMBERED_MS) });
    }
    let Some(given) = &headers.github_signature else {
        return Err(UNSIGNED.into());
    };
    if !signature::matches(&signature::sign_body(secret, body), given) {
        return Err(mismatch("X-Hub-Signature-256", "HMAC-SHA256 of the body"));
    }
    match &headers.github_delivery {
        Some(id) => Ok(Verified { delivery_id: id.clone(), expires_at: None }),
        None => Err("X-Hub-Signature-256 signs no time, so the request must carry X-GitHub-Delivery, the delivery id \
             that keeps it from being replayed (or sign with X-Roscoe-Signature-256 and X-Roscoe-Timestamp)"
            .into()),
    }
}

/// The timestamp `text` when it is a unix time within the tolerance of `now`.
fn fresh(text: &str, now: i64) -> Result<i64, String> {
    let timestamp = text.parse::<i64>().map_err(|_| {
        format!("X-Roscoe-Timestamp '{text}' is not a unix time in whole seconds (as `date +%s` prints it)")
    })?;
    if !signature::is_fresh(timestamp, now) {
        return Err(format!(
            "X-Roscoe-Timestamp {timestamp} is more than {} minutes from the server's clock ({now}): sign the request \
             when you send it, and check the sender's clock",
            TOLERANCE_SECS / 60
        ));
    }
    Ok(timestamp)
}

fn mismatch(header: &str, over: &str) -> String {
    format!(
        "{header} does not match: it must be sha256=<hex {over}> under the secret the server holds for this webhook; \
         check that both sides have the same secret and that the body is sent byte for byte as signed"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000;
    const BODY: &[u8] = br#"{"ref":"main"}"#;

    fn check(headers: WebhookHeaders) -> Result<Verified, String> {
        verify(&headers, b"s3cret", BODY, NOW)
    }

    fn roscoe(timestamp: i64) -> WebhookHeaders {
        WebhookHeaders {
            signature: Some(signature::sign(b"s3cret", timestamp, BODY)),
            timestamp: Some(timestamp.to_string()),
            ..WebhookHeaders::default()
        }
    }

    #[test]
    fn cairn_signatures_must_match_and_be_fresh() {
        let ok = check(roscoe(NOW - 10)).unwrap();
        assert!(ok.delivery_id.starts_with("signature:sha256="), "{ok:?}");
        assert_eq!(ok.expires_at, Some((NOW - 10) * 1000 + REMEMBERED_MS));
        let named = check(WebhookHeaders { delivery: Some("d-1".into()), ..roscoe(NOW) }).unwrap();
        assert_eq!(named.delivery_id, "d-1");
        let stale = check(roscoe(NOW - 301)).unwrap_err();
        assert!(stale.contains("more than 5 minutes"), "{stale}");
        let forged = WebhookHeaders { timestamp: Some(NOW.to_string()), ..roscoe(NOW - 1) };
        assert!(check(forged).unwrap_err().contains("X-Roscoe-Signature-256 does not match"));
        let bare = WebhookHeaders { timestamp: None, ..roscoe(NOW) };
        assert!(check(bare).unwrap_err().contains("needs X-Roscoe-Timestamp"));
        let word = WebhookHeaders { timestamp: Some("soon".into()), ..roscoe(NOW) };
        assert!(check(word).unwrap_err().contains("not a unix time"));
        assert!(check(WebhookHeaders::default()).unwrap_err().contains("not signed"));
        assert!(WebhookHeaders::default().require_signature().unwrap_err().contains("not signed"));
        assert_eq!(roscoe(NOW).require_signature(), Ok(()));
    }

    #[test]
    fn github_signatures_need_a_delivery_id_which_is_kept_for_good() {
        let github = |delivery: Option<&str>| WebhookHeaders {
            github_signature: Some(signature::sign_body(b"s3cret", BODY)),
            github_delivery: delivery.map(str::to_owned),
            ..WebhookHeaders::default()
        };
        let kept = Verified { delivery_id: "72d3162e".into(), expires_at: None };
        assert_eq!(check(github(Some("72d3162e"))).unwrap(), kept);
        assert!(check(github(None)).unwrap_err().contains("must carry X-GitHub-Delivery"));
        let stale = WebhookHeaders { timestamp: Some((NOW - 900).to_string()), ..github(Some("72d3162e")) };
        assert!(check(stale).unwrap_err().contains("more than 5 minutes"));
        let other = Some(signature::sign_body(b"other", BODY));
        let wrong = WebhookHeaders { github_signature: other, ..github(Some("x")) };
        let error = check(wrong).unwrap_err();
        assert!(error.contains("X-Hub-Signature-256 does not match") && !error.contains("s3cret"), "{error}");
    }
}
