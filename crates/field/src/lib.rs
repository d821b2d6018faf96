//! GF(2^8) arithmetic for tcpnc: the field of the random linear code.
//!
//! The field is `GF(2)[x] / (x^8 + x^4 + x^3 + x^2 + 1)`, polynomial `0x11D`, with generator `2`
//! (the field used by the implementation paper, Sundararajan et al. §V-D, "each symbol is one
//! byte"). Addition is XOR; multiplication uses log/exp tables for scalars and SIMD region
//! kernels for byte slices (see [`region`]): SSSE3 / AVX2 / AVX-512BW split-nibble shuffles and
//! GFNI affine transforms, chosen once per process from CPU detection and overridable with
//! `TCPNC_GF_TIER` (see [`Tier`], [`Selection`], [`force_tier`]).
//!
//! With the `isal` feature (benchmarks and tests only), [`isal`] wraps Intel ISA-L's kernels
//! for side-by-side comparison.
//!
//! This crate is sans-IO and has no dependencies. `unsafe` appears only in the x86 kernel
//! modules and in the tier dispatch, each block with its justification.

#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(all(feature = "isal", target_arch = "x86_64"))]
pub mod isal;
pub mod region;
mod scalar;
mod tables;
mod tier;
#[cfg(target_arch = "x86_64")]
mod x86;

pub use region::{
    Fallback, Kernels, Selection, TIER_ENV, Tier, TierUnavailable, dot, force_tier, kernels,
    mul_add, mul_region, selected_tier, tier_selection, with_tier,
};
pub use tables::{EXP, LOG, MUL};

/// The reduction polynomial x^8 + x^4 + x^3 + x^2 + 1.
pub const POLY: u16 = 0x11D;

/// Multiplies two field elements.
#[inline]
pub fn mul(a: u8, b: u8) -> u8 {
    MUL[a as usize][b as usize]
}

/// Multiplicative inverse; `None` for zero, which has none.
#[inline]
pub fn inv(a: u8) -> Option<u8> {
    if a == 0 {
        None
    } else {
        Some(EXP[255 - LOG[a as usize] as usize])
    }
}

/// Divides `a` by `b`; `None` when `b` is zero.
#[inline]
pub fn div(a: u8, b: u8) -> Option<u8> {
    inv(b).map(|ib| mul(a, ib))
}

/// Bitwise reference multiplication: carry-less multiply, then reduce by [`POLY`].
///
/// Slow and obviously correct; every table and SIMD tier is tested against it.
pub const fn mul_reference(a: u8, b: u8) -> u8 {
    let mut product: u16 = 0;
    let mut i = 0;
    while i < 8 {
        if (b >> i) & 1 == 1 {
            product ^= (a as u16) << i;
        }
        i += 1;
    }
    let mut bit = 15;
    while bit >= 8 {
        if (product >> bit) & 1 == 1 {
            product ^= POLY << (bit - 8);
        }
        bit -= 1;
    }
    product as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_match_reference_for_every_pair() {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                assert_eq!(mul(a, b), mul_reference(a, b), "{a} * {b}");
            }
        }
    }

    #[test]
    fn inverse_and_division() {
        assert_eq!(inv(0), None);
        assert_eq!(div(7, 0), None);
        for a in 1..=255u8 {
            let ia = inv(a).unwrap();
            assert_eq!(mul(a, ia), 1, "a = {a}");
            for b in 1..=255u8 {
                assert_eq!(mul(div(a, b).unwrap(), b), a);
            }
        }
    }

    #[test]
    fn two_generates_the_multiplicative_group() {
        let mut seen = [false; 256];
        let mut x = 1u8;
        for _ in 0..255 {
            assert!(!seen[x as usize]);
            seen[x as usize] = true;
            x = mul_reference(x, 2);
        }
        assert_eq!(x, 1);
    }
}
