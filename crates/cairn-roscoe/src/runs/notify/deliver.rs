//! Sending queued notifications: every `cairn serve` and `roscoe mcp` of the database watches the outbox
//! ([`Runs::keep_notifying`]), claims each due attempt with a compare-and-set (so of several servers exactly one
//! sends it), POSTs the stored body with its event, delivery id, timestamp and — when the target names a secret —
//! its signature, and records the attempt. A 2xx answer delivers it; anything else (another status, no connection,
//! no answer within [`SEND_TIMEOUT`]) is retried after 1 s, 2 s, 4 s … (at most an hour apart) until a day after
//! the event, then given up. A server that dies mid-send leaves its claim to lapse ([`LEASE_MS`]) and another sends
//! the attempt again: at least once, the delivery id the same on every attempt.

use std::sync::OnceLock;
use std::time::Duration;

use cairn_store::runs::{self as rows, AttemptEnd, AttemptRow, NewNotification};

use crate::clock::now_ms;
use crate::error::Error;
use crate::runs::Runs;
use crate::signature::{DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, sign};

/// The header naming a delivery's event.
pub const EVENT_HEADER: &str = "x-roscoe-event";
/// How often the outbox is read.
const WATCH_EVERY: Duration = Duration::from_millis(500);
/// How long one attempt may take.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a claim holds an attempt: past it, another server may take the attempt (its sender must have died).
const LEASE_MS: i64 = 30_000;
/// At most this many attempts are sent per read, side by side.
const SEND_AT_ONCE: i64 = 20;
/// The longest wait between two attempts.
const MAX_BACKOFF_MS: i64 = 3_600_000;
/// Attempts stop this long after the event.
const GIVE_UP_AFTER_MS: i64 = 24 * 3_600_000;

impl Runs {
    /// Sends the notification attempts due now that this server claims; how many it sent (delivered or not).
    pub async fn send_due_notifications(&self) -> Result<usize, Error> {
        let now = now_ms();
        let mut conn = self.inner.store.read().await?;
        let due = rows::due_notifications(&mut conn, now, SEND_AT_ONCE).await?;
        drop(conn);
        let mut sends = Vec::new();
        for delivery in due {
            let mut tx = rows::begin(&self.inner.store).await?;
            let (id, claimed_before) = (&delivery.queued.id, delivery.attempts);
            let claimed = rows::claim_notification(&mut tx, id, claimed_before, now, now + LEASE_MS).await?;
            rows::commit(tx).await?;
            if claimed {
                sends.push(self.attempt(delivery.queued, delivery.attempts + 1));
            }
        }
        let sent = sends.len();
        for result in futures::future::join_all(sends).await {
            result?;
        }
        Ok(sent)
    }

    /// Watches this database's outbox in the background for as long as the process runs; deliveries queued while no
    /// server ran (or by `roscoe run`) go out at start.
    pub fn keep_notifying(&self) -> tokio::task::JoinHandle<()> {
        let what = "send the run notifications that fell due";
        self.every(WATCH_EVERY, what, |runs| async move { runs.send_due_notifications().await })
    }

    /// Sends attempt `number` of `delivery` and records how it went.
    async fn attempt(&self, delivery: NewNotification, number: i64) -> Result<(), Error> {
        let (http_status, error) = post(&delivery).await;
        let at = now_ms();
        let end = match (http_status, &error) {
            (Some(200..=299), None) => AttemptEnd::Delivered,
            _ => {
                let next = at + backoff_ms(number);
                if next > delivery.created_at + GIVE_UP_AFTER_MS {
                    AttemptEnd::GivenUp
                } else {
                    AttemptEnd::RetryAt(next)
                }
            }
        };
        if end != AttemptEnd::Delivered {
            let why = error.clone().unwrap_or_else(|| format!("answered HTTP {}", http_status.unwrap_or_default()));
            tracing::warn!(
                delivery = delivery.id,
                event = delivery.event,
                "run notification to {} failed (attempt {number}): {why}{}",
                host_of(&delivery.url),
                if end == AttemptEnd::GivenUp { "; given up" } else { "; it will be retried" }
            );
        }
        let row = AttemptRow { notification_id: delivery.id.clone(), attempt: number, at, http_status, error };
        let mut tx = rows::begin(&self.inner.store).await?;
        rows::finish_attempt(&mut tx, &row, end).await?;
        rows::commit(tx).await?;
        Ok(())
    }
}

/// The wait after failed attempt `number` (1 s, 2 s, 4 s …, at most [`MAX_BACKOFF_MS`]).
fn backoff_ms(number: i64) -> i64 {
    let doublings = u32::try_from(number.saturating_sub(1).min(32)).unwrap_or(32);
    1_000i64.saturating_mul(1i64 << doublings).min(MAX_BACKOFF_MS)
}

/// `host[:port]` of `url`, as pages and logs show a target (its path may hold a token, as Slack's do).
pub(crate) fn host_of(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(parsed) => match (parsed.host_str(), parsed.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            _ => "?".to_owned(),
        },
        Err(_) => "?".to_owned(),
    }
}

/// POSTs `delivery`: the HTTP status answered, and why it failed when it did without one.
async fn post(delivery: &NewNotification) -> (Option<i64>, Option<String>) {
    let timestamp = now_ms() / 1000;
    let mut request = client()
        .post(&delivery.url)
        .timeout(SEND_TIMEOUT)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(EVENT_HEADER, &delivery.event)
        .header(DELIVERY_HEADER, &delivery.id)
        .header(TIMESTAMP_HEADER, timestamp.to_string());
    if let Some(name) = &delivery.secret_env {
        match std::env::var(name) {
            Ok(secret) if !secret.is_empty() => {
                let signature = sign(secret.as_bytes(), timestamp, delivery.body.as_bytes());
                request = request.header(SIGNATURE_HEADER, signature);
            }
            // Never sent unsigned: the operator asked for a signature.
            _ => {
                return (None, Some(format!(
                    "not sent: the signing secret's environment variable {name} is not set on this server; set it \
                     (or remove secret_env from the notify target) and the next attempt is signed"
                )));
            }
        }
    }
    match request.body(delivery.body.clone()).send().await {
        Ok(answer) => (Some(i64::from(answer.status().as_u16())), None),
        // The URL is left out: its path may hold a token.
        Err(error) if error.is_timeout() => (None, Some(format!("no answer within {} s", SEND_TIMEOUT.as_secs()))),
        Err(error) => (None, Some(error.without_url().to_string())),
    }
}

/// The client notifications are sent with: rustls, no redirects followed (a 3xx is a failed attempt).
fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        // reqwest is built without a default TLS provider; ring is the one the tree already has.
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("cairn-roscoe/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("an HTTP client with rustls builds")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_back_off_from_a_second_to_an_hour_and_targets_show_their_host_only() {
        let waits: Vec<i64> = (1..=4).map(backoff_ms).collect();
        assert_eq!(waits, [1_000, 2_000, 4_000, 8_000]);
        assert_eq!(backoff_ms(13), MAX_BACKOFF_MS, "2^12 s is past an hour");
        assert_eq!(backoff_ms(10_000), MAX_BACKOFF_MS);
        assert_eq!(host_of("https://hooks.slack.com/services/T0/B0/secret"), "hooks.slack.com");
        assert_eq!(host_of("http://127.0.0.1:8123/hook"), "127.0.0.1:8123");
        assert_eq!(host_of("not a url"), "?");
    }
}
