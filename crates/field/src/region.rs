//! Region kernels: the same multiply applied to every byte of a slice.
//!
//! `mul_add(dst, src, c)` computes `dst ^= c·src`, `mul_region(dst, c)` computes `dst = c·dst`, and
//! `dot(dst, srcs, coefs)` computes `dst ^= Σ coefs[i]·srcs[i]`. None of them panics on any input:
//! mismatched lengths use the overlap, as documented per function.
//!
//! Each function exists once per [`Tier`] (scalar, SSSE3, AVX2, AVX-512BW shuffles, GFNI affine
//! with AVX or AVX-512); the crate-level functions dispatch on [`selected_tier`], chosen once per
//! process by CPU detection and `TCPNC_GF_TIER` (see [`Selection`]). [`with_tier`] runs a
//! specific tier, for tests and benchmarks.

pub use crate::tier::{
    Fallback, Selection, TIER_ENV, Tier, TierUnavailable, force_tier, selected_tier, tier_selection,
};

use crate::scalar;
#[cfg(target_arch = "x86_64")]
use crate::x86;

/// The region kernels of one tier that this CPU is known to support.
///
/// Obtained from [`with_tier`] (which checks the CPU) or [`kernels`] (the selected tier); the
/// check is what makes calling the tier's `#[target_feature]` code sound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernels {
    /// Invariant: `tier.is_available()`.
    tier: Tier,
}

/// The kernels of `tier`, or an error if this CPU cannot run it.
pub fn with_tier(tier: Tier) -> Result<Kernels, TierUnavailable> {
    if tier.is_available() {
        Ok(Kernels { tier })
    } else {
        Err(TierUnavailable { tier })
    }
}

/// The kernels of the process-wide [`selected_tier`].
#[inline]
pub fn kernels() -> Kernels {
    // `selected_tier` only ever returns available tiers (detection, or a checked `force_tier`).
    Kernels {
        tier: selected_tier(),
    }
}

/// Calls `$f` from the tier module of `$k`, with the arguments given.
macro_rules! dispatch {
    ($k:expr, $f:ident($($arg:expr),*)) => {
        match $k.tier {
            Tier::Scalar => scalar::$f($($arg),*),
            // SAFETY (this and the x86 arms below): a `Kernels` is only built for a tier whose
            // `is_available()` returned true, i.e. the CPU has every feature in that tier's
            // `#[target_feature(enable = ...)]`, so executing its instructions is defined.
            #[cfg(target_arch = "x86_64")]
            Tier::Ssse3 => unsafe { x86::ssse3::$f($($arg),*) },
            // SAFETY: as above, `Tier::Avx2.is_available()` was checked.
            #[cfg(target_arch = "x86_64")]
            Tier::Avx2 => unsafe { x86::avx2::$f($($arg),*) },
            // SAFETY: as above, `Tier::Avx512bw.is_available()` was checked.
            #[cfg(target_arch = "x86_64")]
            Tier::Avx512bw => unsafe { x86::avx512::$f($($arg),*) },
            // SAFETY: as above, `Tier::GfniAvx.is_available()` was checked.
            #[cfg(target_arch = "x86_64")]
            Tier::GfniAvx => unsafe { x86::gfni::avx::$f($($arg),*) },
            // SAFETY: as above, `Tier::GfniAvx512.is_available()` was checked.
            #[cfg(target_arch = "x86_64")]
            Tier::GfniAvx512 => unsafe { x86::gfni::avx512::$f($($arg),*) },
            // Unreachable (only `Scalar` is available off x86_64), but total and safe.
            #[cfg(not(target_arch = "x86_64"))]
            _ => scalar::$f($($arg),*),
        }
    };
}

impl Kernels {
    /// The tier these kernels run.
    pub fn tier(self) -> Tier {
        self.tier
    }

    /// `dst[i] ^= c · src[i]` for `i < min(dst.len(), src.len())`.
    #[inline]
    pub fn mul_add(self, dst: &mut [u8], src: &[u8], c: u8) {
        dispatch!(self, mul_add(dst, src, c))
    }

    /// `dst[i] = c · dst[i]` for every `i`.
    #[inline]
    pub fn mul_region(self, dst: &mut [u8], c: u8) {
        dispatch!(self, mul_region(dst, c))
    }

    /// `dst ^= Σ_k coefs[k] · srcs[k]` for `k < min(srcs.len(), coefs.len())`; see [`dot`].
    #[inline]
    pub fn dot(self, dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
        dispatch!(self, dot(dst, srcs, coefs))
    }
}

/// `dst[i] ^= c · src[i]` for `i < min(dst.len(), src.len())`.
#[inline]
pub fn mul_add(dst: &mut [u8], src: &[u8], c: u8) {
    kernels().mul_add(dst, src, c)
}

/// `dst[i] = c · dst[i]`.
#[inline]
pub fn mul_region(dst: &mut [u8], c: u8) {
    kernels().mul_region(dst, c)
}

/// `dst ^= Σ coefs[k] · srcs[k]`, each source read up to `dst.len()` (shorter sources count as
/// zero-padded: bytes of `dst` past a source's end are untouched by that source). Only the first
/// `min(srcs.len(), coefs.len())` pairs are used.
///
/// SIMD tiers are fused: each block of `dst` is loaded once, accumulates every source in
/// registers, and is stored once, so `dst` traffic does not grow with the number of sources.
#[inline]
pub fn dot(dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
    kernels().dot(dst, srcs, coefs)
}
