//! AVX2 tier: 32 bytes per `vpshufb` pair, split-nibble technique (see `ssse3` for the math).
//!
//! `vpshufb` looks up within each 128-bit lane, so the 16-byte nibble tables are broadcast to
//! both lanes (`vbroadcasti128`, a single load µop). The 256-bit load/store primitives here are
//! shared with the GFNI+AVX tier.

use core::arch::x86_64::*;

use crate::tables::NIBBLE;

/// Eight accumulators, two tables and temporaries fit in the 16 ymm registers.
pub(crate) const WIDE: bool = true;

/// Vector width in bytes.
pub(crate) const W: usize = 32;
pub(crate) type V = __m256i;

/// Broadcast nibble tables for one coefficient.
#[derive(Clone, Copy)]
pub(crate) struct Coef {
    lo: V,
    hi: V,
}

#[target_feature(enable = "avx2")]
#[inline]
fn coef(c: u8) -> Coef {
    let t = NIBBLE[c as usize].as_ptr();
    // SAFETY: `NIBBLE[c]` is 32 bytes: the loads read bytes 0..16 and 16..32 of it.
    let (lo, hi) = unsafe { (_mm_loadu_si128(t.cast()), _mm_loadu_si128(t.add(16).cast())) };
    Coef {
        lo: _mm256_broadcastsi128_si256(lo),
        hi: _mm256_broadcastsi128_si256(hi),
    }
}

#[target_feature(enable = "avx2")]
#[inline]
fn mul(t: Coef, x: V) -> V {
    let mask = _mm256_set1_epi8(0x0f);
    let lo = _mm256_and_si256(x, mask);
    let hi = _mm256_and_si256(_mm256_srli_epi64::<4>(x), mask);
    _mm256_xor_si256(_mm256_shuffle_epi8(t.lo, lo), _mm256_shuffle_epi8(t.hi, hi))
}

#[target_feature(enable = "avx2")]
#[inline]
fn mul_xor(t: Coef, x: V, acc: V) -> V {
    _mm256_xor_si256(acc, mul(t, x))
}

/// # Safety
/// `p..p+W` must be readable.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn loadu(p: *const u8) -> V {
    // SAFETY: the caller guarantees W readable bytes; `loadu` has no alignment requirement.
    unsafe { _mm256_loadu_si256(p.cast()) }
}

/// # Safety
/// `p..p+W` must be writable.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn storeu(p: *mut u8, v: V) {
    // SAFETY: the caller guarantees W writable bytes; no alignment requirement.
    unsafe { _mm256_storeu_si256(p.cast(), v) }
}

/// # Safety
/// `len <= W` and `p..p+len` must be readable.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn load_partial(p: *const u8, len: usize) -> V {
    let mut buf = [0u8; W];
    // SAFETY: the caller guarantees `len` readable bytes at `p`, `len <= W = buf.len()`, and a
    // local buffer cannot overlap them.
    unsafe { core::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), len.min(W)) };
    // SAFETY: `buf` is W bytes.
    unsafe { loadu(buf.as_ptr()) }
}

/// # Safety
/// `len <= W` and `p..p+len` must be writable.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn store_partial(p: *mut u8, v: V, len: usize) {
    let mut buf = [0u8; W];
    // SAFETY: `buf` is W bytes.
    unsafe { storeu(buf.as_mut_ptr(), v) };
    // SAFETY: the caller guarantees `len` writable bytes at `p`; `len <= W = buf.len()`.
    unsafe { core::ptr::copy_nonoverlapping(buf.as_ptr(), p, len.min(W)) };
}

super::region_kernels!("avx2");
