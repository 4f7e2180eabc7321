//! A workflow's triggers — what starts its runs besides a caller: a cron `schedule`, an `every` interval, or a
//! signed `webhook` — and when a timed one falls due next. `trigger_check.rs` reads them from `triggers:`; starting
//! runs is the scheduler's job and the webhook endpoint's.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Serialize;
use serde_json::{Map, Value};

use super::cron::Cron;

/// The prefix every webhook secret's environment variable must have.
pub const WEBHOOK_SECRET_PREFIX: &str = "ROSCOE_HOOK_";

/// The shortest `every` interval, in milliseconds.
pub const MIN_EVERY_MS: u64 = 1000;

/// One entry of `triggers:`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Trigger {
    /// Runs at the times of a five-field cron expression, in a time zone.
    Schedule {
        /// The expression.
        #[serde(rename = "schedule")]
        cron: Cron,
        /// The IANA zone the expression is read in; `None` is UTC.
        #[serde(skip_serializing_if = "Option::is_none")]
        timezone: Option<String>,
        /// The run input (already checked against the workflow's `inputs`).
        #[serde(skip_serializing_if = "Option::is_none")]
        input: Option<Map<String, Value>>,
    },
    /// Runs every `every_ms` milliseconds, at multiples of it since the Unix epoch.
    Every {
        /// The interval as written (`2s`, `15m`).
        every: String,
        /// The interval in milliseconds.
        every_ms: u64,
        /// The run input (already checked against the workflow's `inputs`).
        #[serde(skip_serializing_if = "Option::is_none")]
        input: Option<Map<String, Value>>,
    },
    /// Runs when a request signed with the secret in the server's environment variable `secret_env` arrives.
    Webhook {
        /// The environment variable (always `ROSCOE_HOOK_*`) that holds the HMAC secret on the server.
        secret_env: String,
        /// Input name → template over the request's JSON `body`; `None`: the body is the input.
        #[serde(skip_serializing_if = "Option::is_none")]
        input: Option<Map<String, Value>>,
    },
}

impl Trigger {
    /// `schedule`, `every` or `webhook`.
    pub fn kind(&self) -> &'static str {
        match self {
            Trigger::Schedule { .. } => "schedule",
            Trigger::Every { .. } => "every",
            Trigger::Webhook { .. } => "webhook",
        }
    }

    /// The expression as written: the cron text, the interval, or the secret's variable.
    pub fn expression(&self) -> &str {
        match self {
            Trigger::Schedule { cron, .. } => cron.as_str(),
            Trigger::Every { every, .. } => every,
            Trigger::Webhook { secret_env, .. } => secret_env,
        }
    }

    /// Whether time starts it (a schedule or an interval).
    pub fn is_timed(&self) -> bool {
        !matches!(self, Trigger::Webhook { .. })
    }

    /// The first slot strictly after `after_ms` (milliseconds since the Unix epoch): a cron fire time or a multiple
    /// of the interval; `None` for a webhook, or a schedule with no time left in the next nine years.
    pub fn next_after(&self, after_ms: i64) -> Option<i64> {
        match self {
            Trigger::Schedule { cron, timezone, .. } => {
                let zone = zone(timezone.as_deref())?;
                let after = Timestamp::from_millisecond(after_ms).ok()?;
                cron.next_after(after, &zone).map(Timestamp::as_millisecond)
            }
            Trigger::Every { every_ms, .. } => {
                let every = i64::try_from(*every_ms).ok()?;
                Some((after_ms.div_euclid(every) + 1) * every)
            }
            Trigger::Webhook { .. } => None,
        }
    }

    /// The run input a time-started run gets (an empty object when none is written).
    pub fn timed_input(&self) -> Value {
        match self {
            Trigger::Schedule { input, .. } | Trigger::Every { input, .. } => {
                Value::Object(input.clone().unwrap_or_default())
            }
            Trigger::Webhook { .. } => Value::Object(Map::new()),
        }
    }
}

fn zone(name: Option<&str>) -> Option<TimeZone> {
    match name {
        None => Some(TimeZone::UTC),
        Some(name) => TimeZone::get(name).ok(),
    }
}

/// Whether `name` may hold a webhook secret: `ROSCOE_HOOK_` and then capitals, digits and `_`.
pub fn is_webhook_secret_name(name: &str) -> bool {
    name.strip_prefix(WEBHOOK_SECRET_PREFIX).is_some_and(|rest| {
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    })
}

/// `<n>ms`, `<n>s`, `<n>m`, `<n>h` or `<n>d` in milliseconds, at least [`MIN_EVERY_MS`].
pub fn interval_ms(text: &str) -> Result<u64, String> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = text.split_at(digits);
    let scale = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => 0,
    };
    let ms = number.parse::<u64>().ok().filter(|_| scale > 0).and_then(|n| n.checked_mul(scale));
    match ms {
        None => Err(format!(
            "every `{text}` is not a duration; write a whole number and a unit: ms, s, m, h or d, e.g. 30s"
        )),
        Some(ms) if ms < MIN_EVERY_MS => Err(format!("every `{text}` is shorter than a second; write 1s or more")),
        Some(ms) => Ok(ms),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots() {
        let cron = Cron::parse("0 9 * * 1-5").unwrap();
        let schedule = Trigger::Schedule { cron, timezone: Some("Europe/Paris".into()), input: None };
        // 2026-12-07T08:00Z is 09:00 in Paris, a Monday.
        let after: Timestamp = "2026-12-07T07:00:00Z".parse().unwrap();
        let next = schedule.next_after(after.as_millisecond()).unwrap();
        assert_eq!(Timestamp::from_millisecond(next).unwrap().to_string(), "2026-12-07T08:00:00Z");
        let every = Trigger::Every { every: "2s".into(), every_ms: 2000, input: None };
        assert_eq!(every.next_after(4_001), Some(6_000));
        assert_eq!(every.next_after(6_000), Some(8_000));
        assert_eq!(every.timed_input(), serde_json::json!({}));
        let hook = Trigger::Webhook { secret_env: "ROSCOE_HOOK_A".into(), input: None };
        assert_eq!(hook.next_after(0), None);
        assert!(!hook.is_timed() && every.is_timed());
        assert_eq!(serde_json::to_value(&schedule).unwrap()["schedule"], "0 9 * * 1-5");
        assert_eq!(serde_json::to_value(&hook).unwrap()["secretEnv"], "ROSCOE_HOOK_A");
    }

    #[test]
    fn intervals() {
        assert_eq!(interval_ms("1s"), Ok(1000));
        assert_eq!(interval_ms("1500ms"), Ok(1500));
        assert_eq!(interval_ms("15m"), Ok(900_000));
        assert_eq!(interval_ms("2h"), Ok(7_200_000));
        assert_eq!(interval_ms("1d"), Ok(86_400_000));
        for bad in ["s", "1.5s", "99999999999999999d"] {
            assert!(interval_ms(bad).is_err(), "{bad}");
        }
        assert!(is_webhook_secret_name("ROSCOE_HOOK_A1_B") && !is_webhook_secret_name("ROSCOE_HOOK_"));
        assert!(!is_webhook_secret_name("ROSCOE_HOOK_lower"));
    }
}
