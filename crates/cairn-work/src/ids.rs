//! Ids: a prefix (`acc_`, `prn_`, `tok_`, `sp_`, `doc_`, `wi_`, `ev_`) and 26 Crockford base-32 characters holding
//! the creation time in milliseconds and 80 random bits, so ids sort by creation and never collide in practice.

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A new id with `prefix` (which includes its `_`), made at epoch millisecond `now`.
pub(crate) fn new_id(prefix: &str, now: i64) -> String {
    let mut random = [0u8; 10];
    fill_random(&mut random);
    let mut value: u128 = (u128::from(now as u64) & ((1 << 48) - 1)) << 80;
    for (i, byte) in random.iter().enumerate() {
        value |= u128::from(*byte) << (8 * (9 - i));
    }
    let mut out = String::with_capacity(prefix.len() + 26);
    out.push_str(prefix);
    for i in (0..26).rev() {
        out.push(CROCKFORD[((value >> (5 * i)) & 31) as usize] as char);
    }
    out
}

/// Fills `buffer` from the operating system's random source.
pub(crate) fn fill_random(buffer: &mut [u8]) {
    getrandom::fill(buffer).expect("the operating system's random source is available");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_the_prefix_and_sort_by_time() {
        let a = new_id("wi_", 1_000);
        let b = new_id("wi_", 2_000);
        assert!(a.starts_with("wi_") && a.len() == 29, "{a}");
        assert!(a < b);
        assert_ne!(new_id("wi_", 1_000), new_id("wi_", 1_000));
    }
}
