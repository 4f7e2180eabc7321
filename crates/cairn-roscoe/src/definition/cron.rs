//! Five-field cron expressions (`minute hour day-of-month month day-of-week`) and their next fire time in a zone.
//!
//! A field is `*`, a number, a range `a-b`, a step `*/n` or `a-b/n`, or a comma list of those; months may be named
//! JAN–DEC and days SUN–SAT (any case), and day-of-week 7 is Sunday like 0. The usual cron rule joins the two day
//! fields: when both are restricted (neither starts with `*`) a day matching either fires, otherwise a day must
//! match both. Times are local to the schedule's zone: a local time that a clock change skips fires at
//! the first instant after the gap, and one that happens twice fires once, at its first occurrence.

use std::fmt;

use jiff::civil::{Date, DateTime};
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::Timestamp;
use serde::Serialize;

/// A parsed cron expression; it keeps the text it was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cron {
    text: String,
    minutes: u64,
    hours: u64,
    days: u64,
    months: u64,
    weekdays: u64,
    /// Whether day-of-month / day-of-week start with `*` (unrestricted, for the usual cron rule).
    any_day: bool,
    any_weekday: bool,
}

/// How far ahead [`Cron::next_after`] looks: more than the eight years between two 29 Februaries around 2100.
const SEARCH_DAYS: usize = 366 * 9;

const MONTHS: [&str; 12] = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

struct Field {
    name: &'static str,
    low: u32,
    high: u32,
    names: &'static [&'static str],
    /// Value of the first name (1 for months, 0 for days).
    first_name: u32,
}

const FIELDS: [Field; 5] = [
    Field { name: "minute", low: 0, high: 59, names: &[], first_name: 0 },
    Field { name: "hour", low: 0, high: 23, names: &[], first_name: 0 },
    Field { name: "day-of-month", low: 1, high: 31, names: &[], first_name: 0 },
    Field { name: "month", low: 1, high: 12, names: &MONTHS, first_name: 1 },
    Field { name: "day-of-week", low: 0, high: 7, names: &WEEKDAYS, first_name: 0 },
];

impl Cron {
    /// Parses a five-field expression; the error says which field is wrong and what a field may be.
    pub fn parse(text: &str) -> Result<Cron, String> {
        let parts: Vec<&str> = text.split_whitespace().collect();
        if parts.len() != 5 {
            return Err(format!(
                "the cron expression `{text}` has {} fields; write exactly 5: minute hour day-of-month month \
                 day-of-week, e.g. \"0 9 * * 1-5\"",
                parts.len()
            ));
        }
        let mut sets = [0u64; 5];
        for (i, (part, field)) in parts.iter().zip(FIELDS.iter()).enumerate() {
            sets[i] = field.parse(part).map_err(|e| {
                format!(
                    "the cron expression `{text}`: {} field `{part}`: {e}; a field is *, a number, a-b, */n, a-b/n \
                     or a comma list of them",
                    field.name
                )
            })?;
        }
        let weekdays = if sets[4] & (1 << 7) != 0 { (sets[4] | 1) & !(1 << 7) } else { sets[4] };
        let cron = Cron {
            text: parts.join(" "),
            minutes: sets[0],
            hours: sets[1],
            days: sets[2],
            months: sets[3],
            weekdays,
            any_day: parts[2].starts_with('*'),
            any_weekday: parts[4].starts_with('*'),
        };
        if !cron.can_fire() {
            return Err(format!(
                "the cron expression `{text}` never fires: no month it names has the days of the month it names; \
                 fix the day-of-month or the month"
            ));
        }
        Ok(cron)
    }

    /// The expression as written (fields separated by one space).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The first fire time strictly after `after`, in zone `zone`; `None` if there is none in the next nine years.
    pub fn next_after(&self, after: Timestamp, zone: &TimeZone) -> Option<Timestamp> {
        let start = zone.to_datetime(after);
        let mut date = start.date();
        for _ in 0..SEARCH_DAYS {
            if self.day_matches(date) {
                let today = date == start.date();
                for hour in bits(self.hours).filter(|&h| !today || h >= start.hour() as u32) {
                    let this_hour = today && hour == start.hour() as u32;
                    for minute in bits(self.minutes).filter(|&m| !this_hour || m >= start.minute() as u32) {
                        let local = date.at(hour as i8, minute as i8, 0, 0);
                        if let Some(at) = instant(local, zone).filter(|at| *at > after) {
                            return Some(at);
                        }
                    }
                }
            }
            date = date.tomorrow().ok()?;
        }
        None
    }

    fn day_matches(&self, date: Date) -> bool {
        if !has(self.months, date.month() as u32) {
            return false;
        }
        let day = has(self.days, date.day() as u32);
        let weekday = has(self.weekdays, date.weekday().to_sunday_zero_offset() as u32);
        if self.any_day || self.any_weekday { day && weekday } else { day || weekday }
    }

    /// Whether some date matches: with both day fields restricted any date of a named day-of-week does; otherwise
    /// some named month must have one of the named days (29 February counts; every weekday meets it some year).
    fn can_fire(&self) -> bool {
        const LONGEST: [u32; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
        !self.any_day && !self.any_weekday
            || bits(self.months).any(|m| bits(self.days).any(|d| d <= LONGEST[m as usize - 1]))
    }
}

impl Field {
    fn parse(&self, text: &str) -> Result<u64, String> {
        let mut set = 0u64;
        for item in text.split(',') {
            let (range, step) = match item.split_once('/') {
                Some((range, step)) => {
                    let step: u32 = step.parse().ok().filter(|&s| s >= 1).ok_or_else(|| {
                        format!("the step `/{step}` must be a whole number of at least 1")
                    })?;
                    (range, Some(step))
                }
                None => (item, None),
            };
            let (low, high) = match range {
                "*" => (self.low, self.high),
                _ if step.is_some() && !range.contains('-') => {
                    return Err(format!("a step needs a range before it: write */{0} or a-b/{0}", step.unwrap_or(1)));
                }
                _ => match range.split_once('-') {
                    Some((a, b)) => (self.value(a)?, self.value(b)?),
                    None => {
                        let v = self.value(range)?;
                        (v, v)
                    }
                },
            };
            if low > high {
                return Err(format!("the range {low}-{high} runs backwards; write the smaller value first"));
            }
            let mut v = low;
            while v <= high {
                set |= 1 << v;
                v += step.unwrap_or(1);
            }
        }
        Ok(set)
    }

    fn value(&self, text: &str) -> Result<u32, String> {
        let named = self.names.iter().position(|n| n.eq_ignore_ascii_case(text));
        let v = match (named, text.parse::<u32>()) {
            (Some(i), _) => i as u32 + self.first_name,
            (None, Ok(v)) => v,
            (None, Err(_)) if self.names.is_empty() => return Err(format!("`{text}` is not a number")),
            (None, Err(_)) => {
                return Err(format!("`{text}` is neither a number nor one of {}", self.names.join(", ")));
            }
        };
        if v < self.low || v > self.high {
            return Err(format!("{v} is outside {}-{}", self.low, self.high));
        }
        Ok(v)
    }
}

/// The instant a local time stands for: a skipped time is the end of its gap, a repeated one its first occurrence.
fn instant(local: DateTime, zone: &TimeZone) -> Option<Timestamp> {
    match zone.to_ambiguous_zoned(local).offset() {
        AmbiguousOffset::Unambiguous { offset } => offset.to_timestamp(local).ok(),
        AmbiguousOffset::Fold { before, .. } => before.to_timestamp(local).ok(),
        AmbiguousOffset::Gap { after, .. } => {
            let inside = after.to_timestamp(local).ok()?;
            zone.following(inside).next().map(|t| t.timestamp())
        }
    }
}

fn has(set: u64, v: u32) -> bool {
    set & (1 << v) != 0
}

fn bits(set: u64) -> impl Iterator<Item = u32> {
    (0..64).filter(move |&v| has(set, v))
}

impl fmt::Display for Cron {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Cron {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next `n` fire times after `after` (RFC 3339 UTC), in `zone`.
    fn check(expr: &str, zone: &str, after: &str, n: usize) -> Vec<String> {
        let cron = Cron::parse(expr).unwrap();
        let zone = TimeZone::get(zone).unwrap();
        let mut t: Timestamp = after.parse().unwrap();
        let mut out = Vec::new();
        for _ in 0..n {
            t = cron.next_after(t, &zone).unwrap();
            out.push(t.to_string());
        }
        out
    }

    #[test]
    fn fields_and_names() {
        assert_eq!(
            check("*/20 9-10 * * *", "UTC", "2026-12-07T09:30:00Z", 4),
            ["2026-12-07T09:40:00Z", "2026-12-07T10:00:00Z", "2026-12-07T10:20:00Z", "2026-12-07T10:40:00Z"]
        );
        // 2026-12-07 is a Monday; weekdays by name, any case, and a list.
        assert_eq!(
            check("0 9 * * mon-Fri", "UTC", "2026-12-11T09:00:00Z", 2),
            ["2026-12-14T09:00:00Z", "2026-12-15T09:00:00Z"]
        );
        assert_eq!(check("5 0 1 jan,JUL *", "UTC", "2026-12-07T00:00:00Z", 2), [
            "2027-01-01T00:05:00Z",
            "2027-07-01T00:05:00Z"
        ]);
        assert_eq!(check("0 0 * * 7", "UTC", "2026-12-07T00:00:00Z", 1), ["2026-12-13T00:00:00Z"]);
        assert_eq!(check("0 0 * * 0", "UTC", "2026-12-07T00:00:00Z", 1), ["2026-12-13T00:00:00Z"]);
        assert_eq!(check("0 12 1-10/3 * *", "UTC", "2026-12-02T00:00:00Z", 3), [
            "2026-12-04T12:00:00Z",
            "2026-12-07T12:00:00Z",
            "2026-12-10T12:00:00Z"
        ]);
    }

    #[test]
    fn day_of_month_or_day_of_week() {
        // Both restricted: the 15th or any Friday (2026-12-11 and 2026-12-18 are Fridays).
        assert_eq!(
            check("0 0 15 * FRI", "UTC", "2026-12-07T00:00:00Z", 3),
            ["2026-12-11T00:00:00Z", "2026-12-15T00:00:00Z", "2026-12-18T00:00:00Z"]
        );
        // Only one restricted: that one decides.
        assert_eq!(check("0 0 15 * *", "UTC", "2026-12-07T00:00:00Z", 1), ["2026-12-15T00:00:00Z"]);
        assert_eq!(check("0 0 29 2 *", "UTC", "2026-12-07T00:00:00Z", 1), ["2028-02-29T00:00:00Z"]);
    }

    #[test]
    fn zones_and_strictly_after() {
        assert_eq!(check("0 9 * * *", "Europe/Paris", "2026-12-07T08:00:00Z", 2), [
            "2026-12-08T08:00:00Z",
            "2026-12-09T08:00:00Z"
        ]);
        assert_eq!(check("0 9 * * *", "Europe/Paris", "2026-12-07T07:59:59Z", 1), ["2026-12-07T08:00:00Z"]);
    }

    #[test]
    fn a_skipped_local_time_fires_when_the_gap_ends() {
        // Paris springs forward on 2027-03-28 at 02:00 (+01) to 03:00 (+02): 02:30 does not exist that day.
        assert_eq!(
            check("30 2 * * *", "Europe/Paris", "2027-03-27T00:00:00Z", 3),
            ["2027-03-27T01:30:00Z", "2027-03-28T01:00:00Z", "2027-03-29T00:30:00Z"]
        );
        // Every quarter-hour of the skipped hour collapses into one fire at 03:00 local.
        assert_eq!(check("*/15 2-3 28 3 *", "Europe/Paris", "2027-03-28T00:00:00Z", 3), [
            "2027-03-28T01:00:00Z",
            "2027-03-28T01:15:00Z",
            "2027-03-28T01:30:00Z"
        ]);
    }

    #[test]
    fn a_repeated_local_time_fires_once() {
        // Paris falls back on 2027-10-31 at 03:00 (+02) to 02:00 (+01): 02:30 happens twice.
        assert_eq!(
            check("30 2 * * *", "Europe/Paris", "2027-10-30T12:00:00Z", 2),
            ["2027-10-31T00:30:00Z", "2027-11-01T01:30:00Z"]
        );
        // Hourly at :30 through the night: 01:30 (+02), 02:30 (+02) once, then 03:30 (+01).
        assert_eq!(check("30 * * * *", "Europe/Paris", "2027-10-30T23:00:00Z", 3), [
            "2027-10-30T23:30:00Z",
            "2027-10-31T00:30:00Z",
            "2027-10-31T02:30:00Z"
        ]);
    }

    #[test]
    fn errors_name_the_field_and_the_fix() {
        let err = |text: &str| Cron::parse(text).unwrap_err();
        assert!(err("0 9 * *").contains("has 4 fields; write exactly 5"));
        assert!(err("60 * * * *").contains("minute field `60`: 60 is outside 0-59"));
        assert!(err("0 24 * * *").contains("hour field"));
        assert!(err("0 0 0 * *").contains("day-of-month field `0`: 0 is outside 1-31"));
        assert!(err("0 0 * FOO *").contains("neither a number nor one of JAN"));
        assert!(err("0 0 * * 8").contains("8 is outside 0-7"));
        assert!(err("*/0 * * * *").contains("at least 1"));
        assert!(err("5/2 * * * *").contains("a step needs a range"));
        assert!(err("0 0 * * 5-1").contains("runs backwards"));
        assert!(err("0 0 30 2 *").contains("never fires"));
        assert!(err("0 0 ,1 * *").contains("is not a number"));
        assert_eq!(Cron::parse("  0  9 * *   1-5 ").unwrap().as_str(), "0 9 * * 1-5");
        assert!(Cron::parse("0 0 30 2 MON").is_ok(), "a restricted weekday always meets a date");
    }
}
