//! GFNI tiers: one `vgf2p8affineqb` per vector multiplies every byte by `c`.
//!
//! `GF2P8AFFINEQB x, A, b` computes, per byte, the GF(2) matrix-vector product `A·x ^ b` with an
//! 8×8 bit matrix `A` from the matching qword of its second operand. Multiplication by a constant
//! `c` is GF(2)-linear, so it *is* such a matrix: column `j` is `c·2^j` in our field (poly
//! `0x11D`); `tables::affine_matrix` documents the bit layout and `tables::AFFINE` holds all 256
//! matrices. We deliberately do not use `GF2P8MULB`, which multiplies modulo the AES polynomial
//! `0x11B`, a different field.
//!
//! The matrices are checked against a bitwise emulation of the instruction for all `(c, x)`; the
//! tier tests and the ISA-L oracle test run these tiers wherever GFNI exists (they passed on an
//! AMD Zen 5 EPYC, where they were also measured, see `docs/field.md`) and report them skipped
//! elsewhere. The load/store and tail logic is shared verbatim with the AVX2 / AVX-512BW tiers.

/// GFNI + AVX(2), 256-bit vectors; tails through a stack buffer (as AVX2).
pub(crate) mod avx {
    use core::arch::x86_64::*;

    pub(crate) use crate::x86::avx2::{V, W, WIDE, load_partial, loadu, store_partial, storeu};

    /// The matrix of `x ↦ c·x`, in every qword.
    pub(crate) type Coef = V;

    #[target_feature(enable = "gfni,avx,avx2")]
    #[inline]
    fn coef(c: u8) -> Coef {
        _mm256_set1_epi64x(crate::tables::AFFINE[c as usize] as i64)
    }

    #[target_feature(enable = "gfni,avx,avx2")]
    #[inline]
    fn mul(t: Coef, x: V) -> V {
        _mm256_gf2p8affine_epi64_epi8::<0>(x, t)
    }

    #[target_feature(enable = "gfni,avx,avx2")]
    #[inline]
    fn mul_xor(t: Coef, x: V, acc: V) -> V {
        _mm256_xor_si256(acc, mul(t, x))
    }

    crate::x86::region_kernels!("gfni,avx,avx2");
}

/// GFNI + AVX-512BW, 512-bit vectors; masked tails (as AVX-512BW).
pub(crate) mod avx512 {
    use core::arch::x86_64::*;

    pub(crate) use crate::x86::avx512::{V, W, WIDE, load_partial, loadu, store_partial, storeu};

    /// The matrix of `x ↦ c·x`, in every qword.
    pub(crate) type Coef = V;

    #[target_feature(enable = "gfni,avx512f,avx512bw")]
    #[inline]
    fn coef(c: u8) -> Coef {
        _mm512_set1_epi64(crate::tables::AFFINE[c as usize] as i64)
    }

    #[target_feature(enable = "gfni,avx512f,avx512bw")]
    #[inline]
    fn mul(t: Coef, x: V) -> V {
        _mm512_gf2p8affine_epi64_epi8::<0>(x, t)
    }

    #[target_feature(enable = "gfni,avx512f,avx512bw")]
    #[inline]
    fn mul_xor(t: Coef, x: V, acc: V) -> V {
        _mm512_xor_si512(acc, mul(t, x))
    }

    crate::x86::region_kernels!("gfni,avx512f,avx512bw");
}
