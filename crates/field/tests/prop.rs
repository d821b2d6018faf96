//! Property tests: every tier available on this CPU against the scalar reference
//! ([`mul_reference`]) on random lengths 0..=600 (every block / whole-vector / overlapping-tail
//! combination of every tier: 8 × 64 bytes < 600), random misaligned source and destination
//! offsets, random source counts (crossing the 32-source group) and coefficients. Guard bytes
//! around the destination must be untouched.

use proptest::prelude::*;
use tcpnc_field::mul_reference;
use tcpnc_field::region::{Tier, with_tier};

const GUARD: usize = 40;

fn available() -> Vec<Tier> {
    Tier::ALL.into_iter().filter(|t| t.is_available()).collect()
}

fn reference_mul_add(dst: &mut [u8], src: &[u8], c: u8) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d ^= mul_reference(c, s);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mul_add_and_mul_region_match_the_reference(
        len in 0usize..=600,
        doff in 0usize..64,
        soff in 0usize..64,
        c in any::<u8>(),
        seed in any::<u64>(),
    ) {
        let pool: Vec<u8> = (0..len + 2 * GUARD + 128)
            .map(|i| (seed.wrapping_mul(i as u64 + 1).rotate_left(17) >> 56) as u8)
            .collect();
        let src = &pool[soff..soff + len];
        let orig: Vec<u8> = pool.iter().rev().copied().collect();
        let mut expect = orig.clone();
        reference_mul_add(&mut expect[GUARD + doff..GUARD + doff + len], src, c);
        let mut scaled = orig.clone();
        for b in &mut scaled[GUARD + doff..GUARD + doff + len] {
            *b = mul_reference(c, *b);
        }
        for tier in available() {
            let k = with_tier(tier).unwrap();
            let mut buf = orig.clone();
            k.mul_add(&mut buf[GUARD + doff..GUARD + doff + len], src, c);
            prop_assert!(buf == expect, "{} mul_add len={} c={}", tier, len, c);
            let mut buf = orig.clone();
            k.mul_region(&mut buf[GUARD + doff..GUARD + doff + len], c);
            prop_assert!(buf == scaled, "{} mul_region len={} c={}", tier, len, c);
        }
    }

    #[test]
    fn dot_matches_the_reference(
        len in 0usize..=600,
        doff in 0usize..64,
        sources in prop::collection::vec((0usize..64, any::<u8>(), 0u8..8), 0..40),
        seed in any::<u64>(),
    ) {
        let pool: Vec<u8> = (0..4096 + 700)
            .map(|i| (seed.wrapping_mul(i as u64 + 7).rotate_left(23) >> 56) as u8)
            .collect();
        // Most sources cover `dst`; some are shorter or longer (kind 0 / 1).
        let srcs: Vec<&[u8]> = sources
            .iter()
            .enumerate()
            .map(|(k, &(off, _, kind))| {
                let start = (k * 97 + off) % 4096;
                let slen = match kind {
                    0 => len / 2,
                    1 => len + 33,
                    _ => len,
                };
                &pool[start..start + slen]
            })
            .collect();
        let coefs: Vec<u8> = sources.iter().map(|s| s.1).collect();
        let orig: Vec<u8> = (0..len + 2 * GUARD + 64).map(|i| (i * 13 + 5) as u8).collect();
        let mut expect = orig.clone();
        for (s, &c) in srcs.iter().zip(&coefs) {
            reference_mul_add(&mut expect[GUARD + doff..GUARD + doff + len], s, c);
        }
        for tier in available() {
            let k = with_tier(tier).unwrap();
            let mut buf = orig.clone();
            k.dot(&mut buf[GUARD + doff..GUARD + doff + len], &srcs, &coefs);
            prop_assert!(buf == expect, "{} dot len={} W={}", tier, len, srcs.len());
        }
    }
}
