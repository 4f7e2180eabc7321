//! Time: epoch milliseconds inside, RFC 3339 in UTC with millisecond precision and `Z` outside.

use chrono::{DateTime, SecondsFormat, Utc};

/// Now, in epoch milliseconds.
pub(crate) fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// `ms` as `2026-01-02T03:04:05.123Z`.
pub(crate) fn format_ms(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// An optional time: "" when absent.
pub(crate) fn format_opt(ms: Option<i64>) -> String {
    ms.map(format_ms).unwrap_or_default()
}

/// Parses an RFC 3339 time with any offset into epoch milliseconds.
pub(crate) fn parse_rfc3339(text: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(text).ok().map(|t| t.timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_in_utc_with_milliseconds() {
        let ms = parse_rfc3339("2026-01-02T04:04:05.123+01:00").unwrap();
        assert_eq!(format_ms(ms), "2026-01-02T03:04:05.123Z");
        assert_eq!(parse_rfc3339("yesterday"), None);
    }
}
