//! Intel ISA-L as an independent oracle (feature `isal`; `./scripts/test` installs
//! `libisal-dev` and runs this with `cargo test -p tcpnc-field --features isal --test isal`):
//! its tables are our split-nibble tables, and every tier available here agrees with ISA-L's
//! AVX2 `gf_vect_mad` / `gf_vect_dot_prod` byte for byte, over lengths 64..=300 and packet and
//! block sizes, at misaligned offsets. The wrapper refuses what ISA-L cannot do.
#![cfg(all(feature = "isal", target_arch = "x86_64"))]

use tcpnc_field::isal::{self, IsalCoefs, IsalError};
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

#[test]
fn mul_add_matches_isal_on_every_tier() {
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
            isal::mad_avx2(&mut theirs, src, &coefs, 0).unwrap();
            k.mul_add(&mut ours, src, c);
            assert!(
                ours == theirs,
                "{tier} mul_add len={len} c={c} +{so}/+{doff}"
            );
            let d = &dst_buf[doff..];
            assert!((0..len).all(|j| theirs[j] == d[j] ^ mul_reference(c, src[j])));
        }
    }
}

#[test]
fn dot_matches_isal_on_every_tier() {
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
            isal::dot_prod_avx2(&mut theirs, &srcs, &tables).unwrap();
            // ISA-L overwrites; ours accumulates into zeros.
            let mut ours = vec![0u8; len + 3];
            k.dot(&mut ours[3..], &srcs, &coefs);
            assert!(ours[3..] == theirs[..], "{tier} dot W={w} len={len}");
        }
    }
}

#[test]
fn wrapper_refuses_what_isal_cannot_do() {
    let t = IsalCoefs::new(&[5, 6]).unwrap();
    let src = [1u8; 100];
    let mut short = [0u8; 63];
    assert_eq!(
        isal::mad_avx2(&mut short, &src, &t, 0),
        Err(IsalError::Length(63))
    );
    let mut dst = [0u8; 100];
    assert_eq!(
        isal::mad_avx2(&mut dst, &src, &t, 2),
        Err(IsalError::Sources(2))
    );
    assert_eq!(
        isal::dot_prod_avx2(&mut dst, &[&src], &t),
        Err(IsalError::Sources(1))
    );
    assert_eq!(
        isal::dot_prod_avx2(&mut dst, &[&src, &src[..99]], &t),
        Err(IsalError::ShortSource(1))
    );
    assert!(IsalCoefs::new(&[1; 65]).is_err());
    assert_eq!(dst, [0; 100]);
}
