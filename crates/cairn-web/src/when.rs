//! Times and durations for people: "3 min ago" with the exact time on hover (a `<time>` element whose `title` and
//! `datetime` carry the RFC 3339 text), and "1 min 5 s" for durations. Worked out on the server at render time,
//! so the pages need no script for it; live pages are re-rendered on every change.

use chrono::{DateTime, Utc};

/// One moment as a page shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Moment {
    /// The RFC 3339 text ("" when unknown).
    pub(crate) exact: String,
    /// "3 min ago", "in 2 h", "just now" ("" when unknown).
    pub(crate) ago: String,
}

impl Moment {
    /// `text` (RFC 3339, as the facades give times) relative to now.
    pub(crate) fn of(text: &str) -> Moment {
        Moment::at(text, Utc::now())
    }

    /// `text` relative to `now`; text that is not a time is shown as it is.
    pub(crate) fn at(text: &str, now: DateTime<Utc>) -> Moment {
        let Ok(then) = DateTime::parse_from_rfc3339(text) else {
            return Moment { exact: text.to_owned(), ago: text.to_owned() };
        };
        let seconds = (now - then.with_timezone(&Utc)).num_seconds();
        let span = span(seconds.unsigned_abs());
        let ago = match seconds {
            -9..=9 => "just now".to_owned(),
            s if s < 0 => format!("in {span}"),
            _ => format!("{span} ago"),
        };
        Moment { exact: text.to_owned(), ago }
    }
}

/// The largest unit of `seconds` and, below a day, the next one ("1 h 5 min", "3 min", "12 s", "4 days").
fn span(seconds: u64) -> String {
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min", seconds / 60),
        3600..86_400 => match (seconds % 3600) / 60 {
            0 => format!("{} h", seconds / 3600),
            minutes => format!("{} h {minutes} min", seconds / 3600),
        },
        _ => match seconds / 86_400 {
            1 => "1 day".to_owned(),
            days => format!("{days} days"),
        },
    }
}

/// A duration in milliseconds for people: "840 ms", "3.2 s", "1 min 5 s", "2 h 3 min".
pub(crate) fn duration(ms: i64) -> String {
    let ms = ms.max(0) as u64;
    match ms {
        0..1000 => format!("{ms} ms"),
        1000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        60_000..3_600_000 => format!("{} min {} s", ms / 60_000, (ms % 60_000) / 1000),
        _ => format!("{} h {} min", ms / 3_600_000, (ms % 3_600_000) / 60_000),
    }
}

/// US dollars as cost fields read: `$0.0123` below a cent, `$1.23` above.
pub(crate) fn usd(amount: f64) -> String {
    if amount > 0.0 && amount < 0.01 { format!("${amount:.4}") } else { format!("${amount:.2}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_read_as_people_say_them() {
        let now = DateTime::parse_from_rfc3339("2026-03-01T12:00:00Z").unwrap().with_timezone(&Utc);
        let ago = |text: &str| Moment::at(text, now).ago;
        assert_eq!(ago("2026-03-01T11:59:58.123Z"), "just now");
        assert_eq!(ago("2026-03-01T11:59:30Z"), "30 s ago");
        assert_eq!(ago("2026-03-01T11:57:00Z"), "3 min ago");
        assert_eq!(ago("2026-03-01T10:55:00Z"), "1 h 5 min ago");
        assert_eq!(ago("2026-02-28T12:00:00Z"), "1 day ago");
        assert_eq!(ago("2026-02-20T12:00:00Z"), "9 days ago");
        assert_eq!(ago("2026-03-01T14:00:00Z"), "in 2 h");
        assert_eq!(Moment::at("2026-03-01T11:57:00Z", now).exact, "2026-03-01T11:57:00Z");
        assert_eq!(ago("not a time"), "not a time");
    }

    #[test]
    fn durations_and_money() {
        assert_eq!(duration(840), "840 ms");
        assert_eq!(duration(3_240), "3.2 s");
        assert_eq!(duration(65_000), "1 min 5 s");
        assert_eq!(duration(7_380_000), "2 h 3 min");
        assert_eq!(usd(0.0), "$0.00");
        assert_eq!(usd(0.0042), "$0.0042");
        assert_eq!(usd(1.234), "$1.23");
    }
}
