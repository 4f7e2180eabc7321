//! Spans of time on the command line: `90` or `90s` seconds, `10m` minutes, `2h` hours, `7d` days.

use std::time::Duration;

/// `text` as a span (for clap's `value_parser`): a whole number of seconds, or one with `s`, `m`, `h` or `d`.
pub fn parse_span(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.char_indices().last() {
        Some((at, c)) if c.is_ascii_alphabetic() => (&text[..at], c),
        _ => (text, 's'),
    };
    let n: u64 = number.parse().map_err(|_| format!("'{text}' is not a span: use e.g. 90s, 10m, 2h or 7d"))?;
    let per = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return Err(format!("'{text}': the unit is s, m, h or d (e.g. 10m)")),
    };
    let seconds = n.checked_mul(per).ok_or_else(|| format!("'{text}' is too long a span"))?;
    if seconds == 0 {
        return Err(format!("'{text}': a span is at least one second"));
    }
    Ok(Duration::from_secs(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_read_as_people_write_them() {
        assert_eq!(parse_span("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_span("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_span("2h").unwrap(), Duration::from_secs(7200));
        assert!(parse_span("0s").is_err());
        assert!(parse_span("5w").unwrap_err().contains("unit"));
        assert!(parse_span("soon").is_err());
        assert!(parse_span("99999999999999999d").unwrap_err().contains("too long"));
    }
}
