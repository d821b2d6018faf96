//! Intel ISA-L as an independent oracle (feature `isal`; `./scripts/test` installs
//! `libisal-dev` and runs this with `cargo test -p tcpnc-field --features isal --test isal`):
//! its tables are our split-nibble tables, and every tier available here agrees with ISA-L's
//! AVX2 and AVX-512 `gf_vect_mad` / `gf_vect_dot_prod` byte for byte, over lengths 64..=300 and
//! packet and block sizes, at misaligned offsets. The AVX-512 tests are skipped (with a message)
//! on a CPU without AVX-512BW; there they check that the wrapper refuses. The wrapper refuses
//! what ISA-L cannot do.
#![cfg(all(feature = "isal", target_arch = "x86_64"))]

use tcpnc_field::isal::{self, IsalCoefs, IsalError, IsalIsa};
use tcpnc_field::mul_reference;
use tcpnc_field::region::{Tier, with_tier};

fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

fn lengths() -> impl Iterator<Item = usize> {
    (64..=300).chain([1399, 1400, 1500, 4099, 65536 + 5])
}

#[test]
fn isal_tables_are_our_split_nibble_tables() {
    let coefs: Vec<u8> = (0..64).map(|k| (k * 4 + 1) as u8).collect();
    let t = IsalCoefs::new(&coefs).unwrap();
    for (k, &c) in coefs.iter().enumerate() {
        let table = t.table(k).unwrap();
        for i in 0..16u8 {
            assert_eq!(table[i as usize], mul_reference(c, i), "c={c} lo {i}");
            assert_eq!(
                table[16 + i as usize],
                mul_reference(c, i << 4),
                "c={c} hi {i}"
            );
        }
    }
    assert!(t.table(64).is_none());
}

/// Whether `isa` runs here; if not, checks that the wrappers refuse it without writing and
/// prints why the test is skipped.
fn runs(isa: IsalIsa, test: &str) -> bool {
    if isa.is_available() {
        return true;
    }
    let t = IsalCoefs::new(&[3]).unwrap();
    let src = [7u8; 64];
    let mut dst = [0u8; 64];
    let refusal = isal::mad(isa, &mut dst, &src, &t, 0).unwrap_err();
    assert_eq!(isal::dot_prod(isa, &mut dst, &[&src], &t), Err(refusal));
    assert!(matches!(refusal, IsalError::NoAvx2 | IsalError::NoAvx512));
    assert_eq!(dst, [0; 64]);
    println!("SKIPPED {test}: {refusal}; this CPU cannot run ISA-L's {isa} kernels");
    false
}

fn mul_add_matches(isa: IsalIsa) {
    let src_buf = bytes(1, 70_000);
    let dst_buf = bytes(2, 70_000);
    for tier in Tier::ALL.into_iter().filter(|t| t.is_available()) {
        let k = with_tier(tier).unwrap();
        for (i, len) in lengths().enumerate() {
            let c = (i * 37 + 3) as u8;
            let (so, doff) = (i % 7, (i / 7) % 33);
            let src = &src_buf[so..so + len];
            let coefs = IsalCoefs::new(&[c]).unwrap();
            let mut theirs = dst_buf[doff..doff + len].to_vec();
            let mut ours = theirs.clone();
            isal::mad(isa, &mut theirs, src, &coefs, 0).unwrap();
            k.mul_add(&mut ours, src, c);
            assert!(
                ours == theirs,
                "{tier} vs ISA-L {isa} mul_add len={len} c={c} +{so}/+{doff}"
            );
            let d = &dst_buf[doff..];
            assert!((0..len).all(|j| theirs[j] == d[j] ^ mul_reference(c, src[j])));
        }
    }
}

fn dot_matches(isa: IsalIsa) {
    let pool = bytes(3, 200_000);
    for tier in Tier::ALL.into_iter().filter(|t| t.is_available()) {
        let k = with_tier(tier).unwrap();
        for (i, len) in lengths().enumerate() {
            let w = [1, 2, 8, 12, 16, 33][i % 6];
            let srcs: Vec<&[u8]> = (0..w)
                .map(|j| {
                    let start = (j * 2011 + i * 13) % (pool.len() - len);
                    &pool[start..start + len]
                })
                .collect();
            let coefs: Vec<u8> = (0..w).map(|j| (i * 31 + j * 7) as u8).collect();
            let tables = IsalCoefs::new(&coefs).unwrap();
            let mut theirs = vec![0xa5u8; len];
            isal::dot_prod(isa, &mut theirs, &srcs, &tables).unwrap();
            // ISA-L overwrites; ours accumulates into zeros.
            let mut ours = vec![0u8; len + 3];
            k.dot(&mut ours[3..], &srcs, &coefs);
            assert!(
                ours[3..] == theirs[..],
                "{tier} vs ISA-L {isa} dot W={w} len={len}"
            );
        }
    }
}

#[test]
fn mul_add_matches_isal_on_every_tier() {
    if runs(IsalIsa::Avx2, "mul_add_matches_isal_on_every_tier") {
        mul_add_matches(IsalIsa::Avx2);
    }
}

#[test]
fn mul_add_matches_isal_avx512_on_every_tier() {
    if runs(IsalIsa::Avx512, "mul_add_matches_isal_avx512_on_every_tier") {
        mul_add_matches(IsalIsa::Avx512);
    }
}

#[test]
fn dot_matches_isal_on_every_tier() {
    if runs(IsalIsa::Avx2, "dot_matches_isal_on_every_tier") {
        dot_matches(IsalIsa::Avx2);
    }
}

#[test]
fn dot_matches_isal_avx512_on_every_tier() {
    if runs(IsalIsa::Avx512, "dot_matches_isal_avx512_on_every_tier") {
        dot_matches(IsalIsa::Avx512);
    }
}

#[test]
fn avx512_wrappers_are_the_avx512_kernels() {
    if !runs(IsalIsa::Avx512, "avx512_wrappers_are_the_avx512_kernels") {
        return;
    }
    let src = bytes(4, 200);
    let t = IsalCoefs::new(&[0x1d, 0x8e]).unwrap();
    let (mut a, mut b) = (bytes(5, 200), bytes(5, 200));
    isal::mad_avx512(&mut a, &src, &t, 1).unwrap();
    isal::mad(IsalIsa::Avx512, &mut b, &src, &t, 1).unwrap();
    assert_eq!(a, b);
    let srcs = [&src[1..], &src[..199]];
    isal::dot_prod_avx512(&mut a[..199], &srcs, &t).unwrap();
    isal::dot_prod(IsalIsa::Avx512, &mut b[..199], &srcs, &t).unwrap();
    assert_eq!(a, b);
    assert!(
        (0..199).all(|j| a[j] == mul_reference(0x1d, src[j + 1]) ^ mul_reference(0x8e, src[j]))
    );
}

#[test]
fn wrapper_refuses_what_isal_cannot_do() {
    for isa in IsalIsa::ALL.into_iter().filter(|i| i.is_available()) {
        let t = IsalCoefs::new(&[5, 6]).unwrap();
        let src = [1u8; 100];
        let mut short = [0u8; 63];
        assert_eq!(
            isal::mad(isa, &mut short, &src, &t, 0),
            Err(IsalError::Length(63))
        );
        assert_eq!(
            isal::dot_prod(isa, &mut short, &[&src, &src], &t),
            Err(IsalError::Length(63))
        );
        let mut dst = [0u8; 100];
        assert_eq!(
            isal::mad(isa, &mut dst, &src, &t, 2),
            Err(IsalError::Sources(2))
        );
        assert_eq!(
            isal::dot_prod(isa, &mut dst, &[&src], &t),
            Err(IsalError::Sources(1))
        );
        assert_eq!(
            isal::dot_prod(isa, &mut dst, &[&src, &src[..99]], &t),
            Err(IsalError::ShortSource(1))
        );
        assert_eq!(dst, [0; 100]);
        assert_eq!(short, [0; 63]);
    }
    assert!(IsalCoefs::new(&[1; 65]).is_err());
}
