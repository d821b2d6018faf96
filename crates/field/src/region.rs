//! Region kernels: the same multiply applied to every byte of a slice.
//!
//! `mul_add(dst, src, c)` computes `dst ^= c·src`, `mul_region(dst, c)` computes `dst = c·dst`, and
//! `dot(dst, srcs, coefs)` computes `dst ^= Σ coefs[i]·srcs[i]`.
//!
//! Only the scalar tier exists so far; SIMD tiers are added behind the same functions.

use crate::MUL;

/// An implementation tier of the region kernels, fastest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tier {
    /// Portable table-driven code.
    Scalar,
}

impl Tier {
    /// Stable lower-case name, used in benchmark output and `TCPNC_GF_TIER`.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Scalar => "scalar",
        }
    }
}

/// The tier chosen for this process.
pub fn selected_tier() -> Tier {
    Tier::Scalar
}

/// `dst[i] ^= c · src[i]` for `i < min(dst.len(), src.len())`.
pub fn mul_add(dst: &mut [u8], src: &[u8], c: u8) {
    let row = &MUL[c as usize];
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= row[*s as usize];
    }
}

/// `dst[i] = c · dst[i]`.
pub fn mul_region(dst: &mut [u8], c: u8) {
    let row = &MUL[c as usize];
    for d in dst.iter_mut() {
        *d = row[*d as usize];
    }
}

/// `dst ^= Σ coefs[k] · srcs[k]`, each source read up to `dst.len()` (shorter sources count as
/// zero-padded).
pub fn dot(dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
    for (src, &c) in srcs.iter().zip(coefs) {
        mul_add(dst, src, c);
    }
}
