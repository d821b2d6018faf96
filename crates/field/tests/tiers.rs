//! Every tier *available on this CPU* against the bitwise reference [`mul_reference`]:
//! all 256 coefficients, every length 0..=4099, source and destination offsets 0/1/3/7/31
//! independently, guard bytes around the destination. Tiers the CPU lacks are reported as
//! `SKIPPED` on stderr (run with `--nocapture` to see the report).
//!
//! To stay fast at opt-level 1, the reference for the whole 4099-byte buffer is computed once per
//! (coefficient, offsets) and each kernel call is compared against a prefix of it: lengths
//! `c, c + 256, c + 512, …` run with coefficient `c` (so across the 256 coefficients every length
//! runs once per offset pair), and the full 4099 bytes run with every coefficient.

use std::process::Command;

use tcpnc_field::mul_reference;
use tcpnc_field::region::{Kernels, TIER_ENV, Tier, selected_tier, tier_selection, with_tier};

const MAX_LEN: usize = 4099;
const OFFSETS: [usize; 5] = [0, 1, 3, 7, 31];
/// Bytes after the end of each destination that must stay untouched.
const GUARD: usize = 80;
/// Room for the largest offset, length, deliberate length mismatch (≤ 17) and guard.
const BUF: usize = 31 + MAX_LEN + 17 + GUARD;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() >> 16) as usize % n
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| (self.next() >> 56) as u8).collect()
    }
}

/// `REF[c][x] = mul_reference(c, x)`.
fn reference() -> Vec<[u8; 256]> {
    (0..=255u8)
        .map(|c| std::array::from_fn(|x| mul_reference(c, x as u8)))
        .collect()
}

fn kernels_or_skip(tier: Tier, what: &str) -> Option<Kernels> {
    match with_tier(tier) {
        Ok(k) => {
            assert_eq!(k.tier(), tier);
            eprintln!("TESTED tier {tier}: {what}");
            Some(k)
        }
        Err(e) => {
            assert!(!tier.is_available());
            eprintln!("SKIPPED tier {tier}: {what}: {e}");
            None
        }
    }
}

/// `buf[off..off + len]` must equal `expect[..len]`; `buf` elsewhere (before `off`, and `GUARD`
/// bytes after the end) must equal `orig`.
fn verify(
    buf: &[u8],
    orig: &[u8],
    expect: &[u8],
    off: usize,
    len: usize,
    ctx: &dyn Fn() -> String,
) {
    if buf[off..off + len] != expect[..len] {
        let i = (0..len).find(|&i| buf[off + i] != expect[i]).unwrap();
        panic!(
            "{}: byte {i} of {len} is {:#04x}, expected {:#04x}",
            ctx(),
            buf[off + i],
            expect[i]
        );
    }
    let end = off + len;
    assert!(buf[..off] == orig[..off], "{}: wrote before dst", ctx());
    assert!(
        buf[end..end + GUARD] == orig[end..end + GUARD],
        "{}: wrote past the end of the processed range",
        ctx()
    );
}

fn source_buffer(rng: &mut Rng) -> Vec<u8> {
    let mut src = rng.bytes(BUF);
    // Every byte value inside every window that starts at an offset <= 31 and is >= 288 long.
    for (j, b) in src[32..288].iter_mut().enumerate() {
        *b = j as u8;
    }
    src
}

fn check_mul_add(k: Kernels) {
    let r = reference();
    let mut rng = Rng(0x6d75_6c5f_6164_6401);
    let src_buf = source_buffer(&mut rng);
    let dst0 = rng.bytes(BUF);
    let mut dst = dst0.clone();
    let mut expect = vec![0u8; MAX_LEN];
    for so in OFFSETS {
        let src = &src_buf[so..];
        for doff in OFFSETS {
            for c in 0..=255u8 {
                let row = &r[c as usize];
                for i in 0..MAX_LEN {
                    expect[i] = dst0[doff + i] ^ row[src[i] as usize];
                }
                for len in (c as usize..=MAX_LEN).step_by(256).chain([MAX_LEN]) {
                    // Mismatched lengths: the shorter one decides (extra dst bytes are checked
                    // as guard bytes).
                    let (dlen, slen) = match c % 3 {
                        0 => (len, len),
                        1 => (len + 17, len),
                        _ => (len, len + 9),
                    };
                    k.mul_add(&mut dst[doff..doff + dlen], &src[..slen], c);
                    let ctx =
                        || format!("{} mul_add c={c} len={len} src+{so} dst+{doff}", k.tier());
                    verify(&dst, &dst0, &expect, doff, len, &ctx);
                    dst[doff..doff + len].copy_from_slice(&dst0[doff..doff + len]);
                }
            }
        }
    }
}

fn check_mul_region(k: Kernels) {
    let r = reference();
    let mut rng = Rng(0x6d75_6c5f_7265_6702);
    let dst0 = source_buffer(&mut rng);
    let mut dst = dst0.clone();
    let mut expect = vec![0u8; MAX_LEN];
    for doff in OFFSETS {
        for c in 0..=255u8 {
            let row = &r[c as usize];
            for i in 0..MAX_LEN {
                expect[i] = row[dst0[doff + i] as usize];
            }
            for len in (c as usize..=MAX_LEN).step_by(256).chain([MAX_LEN]) {
                k.mul_region(&mut dst[doff..doff + len], c);
                let ctx = || format!("{} mul_region c={c} len={len} dst+{doff}", k.tier());
                verify(&dst, &dst0, &expect, doff, len, &ctx);
                dst[doff..doff + len].copy_from_slice(&dst0[doff..doff + len]);
            }
        }
    }
}

fn check_dot(k: Kernels) {
    let r = reference();
    let mut rng = Rng(0x646f_745f_7465_7303);
    let pool = rng.bytes(1 << 16);
    let dst0 = rng.bytes(BUF);
    let mut dst = dst0.clone();
    let mut seen = [false; 256];
    let lens: Vec<usize> = (0..=300)
        .chain((301..=MAX_LEN).step_by(61))
        .chain([511, 512, 513, 1023, 1024, 1025, 1500, 2047, 2048, 2049])
        .chain([4095, 4096, 4097, 4098, 4099])
        .collect();
    // 32, 33 and 65 sources cross the SIMD tiers' group size (32 fused sources per pass).
    for count in (1..=20).chain([32, 33, 65]) {
        for &len in &lens {
            let doff = OFFSETS[rng.below(OFFSETS.len())];
            let mut srcs: Vec<&[u8]> = Vec::new();
            let mut coefs: Vec<u8> = Vec::new();
            // One surplus source or coefficient sometimes: it must be ignored.
            let surplus = rng.below(4);
            for i in 0..count + 1 {
                let slen = match rng.below(10) {
                    0..=3 => len,
                    4..=6 => rng.below(len + 1),
                    7 | 8 => len + 1 + rng.below(100),
                    _ => rng.below(8),
                };
                let start = (rng.below(pool.len() - MAX_LEN - 200) & !63) + OFFSETS[rng.below(5)];
                let c = match rng.below(16) {
                    0 => 0,
                    1 => 1,
                    _ => rng.next() as u8,
                };
                if i < count || surplus == 1 {
                    srcs.push(&pool[start..start + slen]);
                }
                if i < count || surplus == 2 {
                    coefs.push(c);
                }
            }
            let mut expect = dst0[doff..doff + len].to_vec();
            for (s, &c) in srcs.iter().zip(&coefs).take(count) {
                seen[c as usize] = true;
                let row = &r[c as usize];
                for (e, &x) in expect.iter_mut().zip(s.iter()) {
                    *e ^= row[x as usize];
                }
            }
            k.dot(&mut dst[doff..doff + len], &srcs, &coefs);
            let ctx = || {
                let slens: Vec<usize> = srcs.iter().map(|s| s.len()).collect();
                format!(
                    "{} dot count={count} len={len} dst+{doff} src lens {slens:?} coefs {coefs:?}",
                    k.tier()
                )
            };
            verify(&dst, &dst0, &expect, doff, len, &ctx);
            dst[doff..doff + len].copy_from_slice(&dst0[doff..doff + len]);
        }
    }
    assert!(
        seen.iter().all(|&s| s),
        "dot cases must cover all 256 coefficients"
    );
}

fn check_degenerate(k: Kernels) {
    let mut empty: [u8; 0] = [];
    let mut d = [5u8; 3];
    k.mul_add(&mut empty, &[1, 2, 3], 7);
    k.mul_add(&mut d, &[], 7);
    k.mul_region(&mut empty, 9);
    k.dot(&mut empty, &[&[1, 2]], &[3]);
    k.dot(&mut d, &[], &[1, 2]);
    k.dot(&mut d, &[&[1], &[2]], &[]);
    k.dot(&mut d, &[&[], &[]], &[3, 4]);
    assert_eq!(d, [5; 3]);
    k.mul_region(&mut d, 1);
    assert_eq!(d, [5; 3]);
    k.mul_region(&mut d, 0);
    assert_eq!(d, [0; 3]);
}

macro_rules! tier_tests {
    ($($module:ident => $tier:expr),* $(,)?) => {$(
        mod $module {
            use super::*;

            #[test]
            fn mul_add_matches_reference_all_coefs_lengths_offsets() {
                if let Some(k) = kernels_or_skip($tier, "mul_add") {
                    check_mul_add(k);
                }
            }

            #[test]
            fn mul_region_matches_reference_all_coefs_lengths_offsets() {
                if let Some(k) = kernels_or_skip($tier, "mul_region") {
                    check_mul_region(k);
                }
            }

            #[test]
            fn dot_matches_reference_1_to_20_sources_mixed_lengths() {
                if let Some(k) = kernels_or_skip($tier, "dot") {
                    check_dot(k);
                }
            }

            #[test]
            fn degenerate_inputs_do_not_panic() {
                if let Some(k) = kernels_or_skip($tier, "degenerate inputs") {
                    check_degenerate(k);
                }
            }
        }
    )*};
}

tier_tests!(
    tier_scalar => Tier::Scalar,
    tier_ssse3 => Tier::Ssse3,
    tier_avx2 => Tier::Avx2,
    tier_avx512bw => Tier::Avx512bw,
    tier_gfni_avx => Tier::GfniAvx,
    tier_gfni_avx512 => Tier::GfniAvx512,
);

#[test]
fn report_tested_and_skipped_tiers() {
    let (tested, skipped): (Vec<Tier>, Vec<Tier>) =
        Tier::ALL.into_iter().partition(|t| t.is_available());
    let names = |ts: &[Tier]| ts.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ");
    eprintln!("tiers tested on this CPU: {}", names(&tested));
    eprintln!("tiers SKIPPED (CPU lacks them): {}", names(&skipped));
    assert!(tested.contains(&Tier::Scalar));
    assert!(selected_tier().is_available());
    for t in skipped {
        assert!(with_tier(t).is_err());
    }
}

#[test]
fn crate_level_functions_match_reference() {
    let src: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
    let mut dst = vec![0x5au8; 1000];
    tcpnc_field::mul_add(&mut dst, &src, 0x8e);
    tcpnc_field::dot(&mut dst, &[&src[..500], &src], &[3, 0x8e]);
    tcpnc_field::mul_region(&mut dst, 7);
    for (i, (&d, &s)) in dst.iter().zip(&src).enumerate() {
        let first = if i < 500 { mul_reference(3, s) } else { 0 };
        assert_eq!(d, mul_reference(7, 0x5a ^ first), "byte {i}");
    }
}

/// Runs `env_probe_child` in a fresh copy of this test binary with `TCPNC_GF_TIER` set, so the
/// variable is read at first selection exactly as in production, without racing other tests.
#[test]
fn env_var_forces_tier_in_a_fresh_process() {
    let exe = std::env::current_exe().unwrap();
    let best = Tier::best_available();
    let mut cases = vec![("bogus-tier", best, true), ("auto", best, false)];
    for t in Tier::ALL {
        if t.is_available() {
            cases.push((t.name(), t, false));
        } else {
            cases.push((t.name(), best, true));
        }
    }
    for (value, expect, fell_back) in cases {
        let out = Command::new(&exe)
            .args([
                "--exact",
                "env_probe_child",
                "--ignored",
                "--test-threads=1",
            ])
            .env(TIER_ENV, value)
            .env("TCPNC_FIELD_PROBE_TIER", expect.name())
            .env("TCPNC_FIELD_PROBE_FALLBACK", fell_back.to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{TIER_ENV}={value}: child failed\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("{TIER_ENV}={value} -> {expect} (fell back: {fell_back})");
    }
}

#[test]
#[ignore = "child half of env_var_forces_tier_in_a_fresh_process"]
fn env_probe_child() {
    let Ok(expect) = std::env::var("TCPNC_FIELD_PROBE_TIER") else {
        return;
    };
    let fell_back = std::env::var("TCPNC_FIELD_PROBE_FALLBACK").unwrap();
    let selection = tier_selection();
    assert_eq!(selected_tier().name(), expect);
    assert_eq!(selection.tier.name(), expect);
    assert_eq!(selection.fell_back().to_string(), fell_back);
    let mut d = [1u8; 100];
    tcpnc_field::mul_add(&mut d, &[2u8; 100], 0x80);
    assert!(d.iter().all(|&b| b == 1 ^ mul_reference(0x80, 2)));
}
