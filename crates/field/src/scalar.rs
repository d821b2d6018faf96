//! The portable tier: one `MUL[c]` row lookup per byte. The reference point for the SIMD tiers
//! and the only tier on non-x86_64 targets.

#![forbid(unsafe_code)]

use crate::MUL;

pub(crate) fn mul_add(dst: &mut [u8], src: &[u8], c: u8) {
    if c == 0 {
        return;
    }
    let row = &MUL[c as usize];
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= row[*s as usize];
    }
}

pub(crate) fn mul_region(dst: &mut [u8], c: u8) {
    match c {
        0 => dst.fill(0),
        1 => {}
        _ => {
            let row = &MUL[c as usize];
            for d in dst.iter_mut() {
                *d = row[*d as usize];
            }
        }
    }
}

/// Not fused: at one lookup per byte the table, not the `dst` traffic, is the bottleneck.
pub(crate) fn dot(dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
    for (src, &c) in srcs.iter().zip(coefs) {
        mul_add(dst, src, c);
    }
}
