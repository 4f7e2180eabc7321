//! Time and ids for runs: epoch milliseconds, RFC 3339 text, and lower-case ULID-style ids (26 alphanumeric
//! characters, time-ordered) that survive Markdown unescaped (§9.4).
//! The runs layer gives the engine these as its `Env` (`runs/drive.rs`); the engine's tests give it their own.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// Now, in epoch milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// A fresh id: 10 characters of millisecond time, then 16 random ones (Crockford base32, lower case).
pub fn new_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let ms = now_ms().max(0) as u64;
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    let high = hasher.finish();
    hasher.write_u64(high);
    let low = hasher.finish();
    let random = ((high as u128) << 64 | low as u128) & ((1u128 << 80) - 1);
    let mut id = String::with_capacity(26);
    for i in (0..10).rev() {
        id.push(ALPHABET[((ms >> (i * 5)) & 31) as usize] as char);
    }
    for i in (0..16).rev() {
        id.push(ALPHABET[((random >> (i * 5)) & 31) as usize] as char);
    }
    id
}

/// `ms` (epoch milliseconds) as RFC 3339 UTC with milliseconds: `2026-11-30T09:40:23.123Z`.
pub fn rfc3339(ms: i64) -> String {
    let (secs, millis) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_lower_case_alphanumeric_unique_and_time_ordered() {
        let a = new_id();
        let b = new_id();
        assert_eq!(a.len(), 26);
        assert!(a.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()), "{a}");
        assert_ne!(a, b);
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(new_id()[..10] > a[..10]);
    }

    #[test]
    fn rfc3339_text() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_795_945_223_123), "2026-11-29T09:40:23.123Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
