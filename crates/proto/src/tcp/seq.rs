//! TCP sequence-number arithmetic modulo 2^32 (RFC 9293 §3.4, RFC 1982 serial-number arithmetic).
//!
//! Every comparison of TCP sequence or acknowledgment numbers in tcpnc must go through these
//! helpers: plain `<` on `u32` is wrong as soon as a connection crosses the 2^32 wrap. `a` is
//! "before" `b` when the signed 32-bit distance `a - b` is negative. The comparison is only
//! meaningful for numbers less than 2^31 apart; at a distance of exactly 2^31 both `seq_lt(a, b)`
//! and `seq_lt(b, a)` hold (RFC 1982 leaves that case undefined). TCP windows are below 2^30
//! (RFC 7323 §2.3), and the coding buffer caps its span below 2^30, so this never arises.

/// Signed distance `a - b` in sequence space (positive when `a` is after `b`).
#[inline]
pub fn seq_diff(a: u32, b: u32) -> i32 {
    a.wrapping_sub(b) as i32
}

/// `a` strictly before `b`.
#[inline]
pub fn seq_lt(a: u32, b: u32) -> bool {
    seq_diff(a, b) < 0
}

/// `a` before or equal to `b`.
#[inline]
pub fn seq_le(a: u32, b: u32) -> bool {
    seq_diff(a, b) <= 0
}

/// `a` strictly after `b`.
#[inline]
pub fn seq_gt(a: u32, b: u32) -> bool {
    seq_diff(a, b) > 0
}

/// `a` after or equal to `b`.
#[inline]
pub fn seq_ge(a: u32, b: u32) -> bool {
    seq_diff(a, b) >= 0
}

/// The later of two sequence numbers.
#[inline]
pub fn seq_max(a: u32, b: u32) -> u32 {
    if seq_ge(a, b) { a } else { b }
}

/// The earlier of two sequence numbers.
#[inline]
pub fn seq_min(a: u32, b: u32) -> u32 {
    if seq_le(a, b) { a } else { b }
}

/// `seq + n` modulo 2^32.
#[inline]
pub fn seq_add(seq: u32, n: u32) -> u32 {
    seq.wrapping_add(n)
}

/// `lo <= x <= hi` in sequence space (inclusive on both ends; `lo` must not be after `hi`).
#[inline]
pub fn seq_in_inclusive(x: u32, lo: u32, hi: u32) -> bool {
    seq_le(lo, x) && seq_le(x, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordering_across_wrap() {
        let a = u32::MAX - 5;
        let b = 10u32;
        assert!(seq_lt(a, b) && seq_le(a, b) && !seq_gt(a, b) && !seq_ge(a, b));
        assert!(seq_gt(b, a) && seq_ge(b, a));
        assert_eq!(seq_diff(b, a), 16);
        assert_eq!(seq_diff(a, b), -16);
        assert_eq!(seq_max(a, b), b);
        assert_eq!(seq_min(a, b), a);
        assert_eq!(seq_add(a, 16), b);
        assert!(seq_in_inclusive(0, a, b));
        assert!(seq_in_inclusive(u32::MAX, a, b));
        assert!(!seq_in_inclusive(11, a, b));
        assert!(seq_le(7, 7) && seq_ge(7, 7) && !seq_lt(7, 7));
    }
}
