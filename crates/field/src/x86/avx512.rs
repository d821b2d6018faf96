//! AVX-512BW tier: 64 bytes per `vpshufb` pair, split-nibble technique (see `ssse3` for the
//! math). This is the fastest tier on AVX-512 CPUs without GFNI (Skylake-SP/Cascade Lake).
//!
//! * The 16-byte nibble tables are broadcast to all four 128-bit lanes (`vbroadcasti32x4`).
//! * `acc ^ T_lo[..] ^ T_hi[..]` is one `vpternlogd` (truth table `0x96` = three-way XOR).
//! * Tails use byte-masked loads/stores (`vmovdqu8` with a `k` mask): masked-off bytes are neither
//!   read nor written and cannot fault, so no scalar tail loop or bounce buffer is needed.
//!
//! The 512-bit load/store primitives are shared with the GFNI+AVX-512 tier.

use core::arch::x86_64::*;

use crate::tables::NIBBLE;

/// Eight accumulators, two tables and temporaries fit in the 32 zmm registers.
pub(crate) const WIDE: bool = true;

/// Vector width in bytes.
pub(crate) const W: usize = 64;
pub(crate) type V = __m512i;

/// Broadcast nibble tables for one coefficient.
#[derive(Clone, Copy)]
pub(crate) struct Coef {
    lo: V,
    hi: V,
}

#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn coef(c: u8) -> Coef {
    let t = NIBBLE[c as usize].as_ptr();
    // SAFETY: `NIBBLE[c]` is 32 bytes: the loads read bytes 0..16 and 16..32 of it.
    let (lo, hi) = unsafe { (_mm_loadu_si128(t.cast()), _mm_loadu_si128(t.add(16).cast())) };
    Coef {
        lo: _mm512_broadcast_i32x4(lo),
        hi: _mm512_broadcast_i32x4(hi),
    }
}

#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn lookups(t: Coef, x: V) -> (V, V) {
    let mask = _mm512_set1_epi8(0x0f);
    let lo = _mm512_and_si512(x, mask);
    let hi = _mm512_and_si512(_mm512_srli_epi64::<4>(x), mask);
    (_mm512_shuffle_epi8(t.lo, lo), _mm512_shuffle_epi8(t.hi, hi))
}

#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn mul(t: Coef, x: V) -> V {
    let (a, b) = lookups(t, x);
    _mm512_xor_si512(a, b)
}

#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn mul_xor(t: Coef, x: V, acc: V) -> V {
    let (a, b) = lookups(t, x);
    _mm512_ternarylogic_epi32::<0x96>(acc, a, b)
}

/// Mask selecting the first `len` bytes (`len <= 64`).
#[inline]
fn first(len: usize) -> __mmask64 {
    if len >= W { !0 } else { (1u64 << len) - 1 }
}

/// # Safety
/// `p..p+W` must be readable.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(crate) unsafe fn loadu(p: *const u8) -> V {
    // SAFETY: the caller guarantees W readable bytes; `loadu` has no alignment requirement.
    unsafe { _mm512_loadu_si512(p.cast()) }
}

/// # Safety
/// `p..p+W` must be writable.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(crate) unsafe fn storeu(p: *mut u8, v: V) {
    // SAFETY: the caller guarantees W writable bytes; no alignment requirement.
    unsafe { _mm512_storeu_si512(p.cast(), v) }
}

/// # Safety
/// `len <= W` and `p..p+len` must be readable.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(crate) unsafe fn load_partial(p: *const u8, len: usize) -> V {
    // SAFETY: only the first `len` bytes are enabled in the mask, and the caller guarantees they
    // are readable; masked-off bytes are not accessed (AVX-512 fault suppression; LLVM's
    // `masked.load`) and read as zero.
    unsafe { _mm512_maskz_loadu_epi8(first(len), p.cast()) }
}

/// # Safety
/// `len <= W` and `p..p+len` must be writable.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(crate) unsafe fn store_partial(p: *mut u8, v: V, len: usize) {
    // SAFETY: only the first `len` bytes are enabled in the mask and the caller guarantees they
    // are writable; masked-off bytes are not accessed.
    unsafe { _mm512_mask_storeu_epi8(p.cast(), first(len), v) }
}

super::region_kernels!("avx512f,avx512bw");
