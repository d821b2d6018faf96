//! SSSE3 tier: 16 bytes per `pshufb` pair, split-nibble technique.
//!
//! `c·x = T_lo[x & 15] ^ T_hi[x >> 4]` with `T_lo[i] = c·i`, `T_hi[i] = c·(i << 4)` (linearity of
//! multiplication by `c` over GF(2); tables in `tables::NIBBLE`). `pshufb` performs sixteen
//! 16-entry lookups at once. It zeroes a lane whose index byte has bit 7 set, so both indices are
//! masked to 4 bits (for the high nibble after a 64-bit shift, which also drags in bits of the
//! neighbouring byte).

use core::arch::x86_64::*;

use crate::tables::NIBBLE;

/// With 16 xmm registers, eight-vector `dot` blocks spill: keep to four.
pub(crate) const WIDE: bool = false;

/// Vector width in bytes.
pub(crate) const W: usize = 16;
type V = __m128i;

/// Broadcast nibble tables for one coefficient.
#[derive(Clone, Copy)]
pub(crate) struct Coef {
    lo: V,
    hi: V,
}

#[target_feature(enable = "ssse3")]
#[inline]
fn coef(c: u8) -> Coef {
    let t = NIBBLE[c as usize].as_ptr();
    // SAFETY: `NIBBLE[c]` is 32 bytes: the loads read bytes 0..16 and 16..32 of it.
    unsafe {
        Coef {
            lo: _mm_loadu_si128(t.cast()),
            hi: _mm_loadu_si128(t.add(16).cast()),
        }
    }
}

#[target_feature(enable = "ssse3")]
#[inline]
fn mul(t: Coef, x: V) -> V {
    let mask = _mm_set1_epi8(0x0f);
    let lo = _mm_and_si128(x, mask);
    let hi = _mm_and_si128(_mm_srli_epi64::<4>(x), mask);
    _mm_xor_si128(_mm_shuffle_epi8(t.lo, lo), _mm_shuffle_epi8(t.hi, hi))
}

#[target_feature(enable = "ssse3")]
#[inline]
fn mul_xor(t: Coef, x: V, acc: V) -> V {
    _mm_xor_si128(acc, mul(t, x))
}

/// # Safety
/// `p..p+W` must be readable.
#[target_feature(enable = "ssse3")]
#[inline]
unsafe fn loadu(p: *const u8) -> V {
    // SAFETY: the caller guarantees W readable bytes; `loadu` has no alignment requirement.
    unsafe { _mm_loadu_si128(p.cast()) }
}

/// # Safety
/// `p..p+W` must be writable.
#[target_feature(enable = "ssse3")]
#[inline]
unsafe fn storeu(p: *mut u8, v: V) {
    // SAFETY: the caller guarantees W writable bytes; no alignment requirement.
    unsafe { _mm_storeu_si128(p.cast(), v) }
}

/// # Safety
/// `len <= W` and `p..p+len` must be readable.
#[target_feature(enable = "ssse3")]
#[inline]
unsafe fn load_partial(p: *const u8, len: usize) -> V {
    let mut buf = [0u8; W];
    // SAFETY: the caller guarantees `len` readable bytes at `p`, `len <= W = buf.len()`, and a
    // local buffer cannot overlap them.
    unsafe { core::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), len.min(W)) };
    // SAFETY: `buf` is W bytes.
    unsafe { loadu(buf.as_ptr()) }
}

/// # Safety
/// `len <= W` and `p..p+len` must be writable.
#[target_feature(enable = "ssse3")]
#[inline]
unsafe fn store_partial(p: *mut u8, v: V, len: usize) {
    let mut buf = [0u8; W];
    // SAFETY: `buf` is W bytes.
    unsafe { storeu(buf.as_mut_ptr(), v) };
    // SAFETY: the caller guarantees `len` writable bytes at `p`; `len <= W = buf.len()`.
    unsafe { core::ptr::copy_nonoverlapping(buf.as_ptr(), p, len.min(W)) };
}

super::region_kernels!("ssse3");
