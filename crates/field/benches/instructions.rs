//! A fixed amount of kernel work for instruction counting under valgrind, which turns the
//! per-tier bounds in `docs/field.md` into measured instructions per 32 bytes.
//!
//! `instructions KERNEL TIER BYTES W CALLS` runs `CALLS` calls of `mul_add` (W ignored), `dot`
//! (W sources) or, with `--features isal`, `isal-mad` / `isal-dot`, on cache-hot buffers. Count
//! with, for example:
//!
//! ```text
//! cargo bench -p tcpnc-field --features isal --bench instructions --no-run
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/deps/instructions-* dot avx2 1400 16 1000
//! ```
//!
//! and subtract a run with `CALLS = 0` (set-up only); the difference / CALLS is per call.
//! Without arguments (as `cargo bench` runs it) it does one call of each and exits.

mod common;

use std::hint::black_box;

use common::bytes;
use tcpnc_field::region::{Tier, with_tier};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.to_owned());
    let kernel = arg(0, "dot");
    let tier = Tier::from_name(&arg(1, "scalar")).expect("tier name");
    let len: usize = arg(2, "1400").parse().expect("bytes");
    let w: usize = arg(3, "16").parse().expect("W");
    let calls: usize = arg(4, "1").parse().expect("calls");
    let k = with_tier(tier).expect("tier available");
    let src = bytes(1, len);
    let mut dst = bytes(2, len);
    let sources: Vec<Vec<u8>> = (0..w).map(|j| bytes(10 + j as u64, len)).collect();
    let srcs: Vec<&[u8]> = sources.iter().map(Vec::as_slice).collect();
    let coefs: Vec<u8> = (0..w).map(|j| (j as u8).wrapping_mul(37) | 2).collect();
    match kernel.as_str() {
        "mul_add" => (0..calls).for_each(|_| k.mul_add(black_box(&mut dst), &src, 0x53)),
        "dot" => (0..calls).for_each(|_| k.dot(black_box(&mut dst), &srcs, &coefs)),
        #[cfg(all(feature = "isal", target_arch = "x86_64"))]
        "isal-mad" => {
            let t = tcpnc_field::isal::IsalCoefs::new(&[0x53]).unwrap();
            (0..calls).for_each(|_| {
                tcpnc_field::isal::mad_avx2(black_box(&mut dst), &src, &t, 0).unwrap()
            })
        }
        #[cfg(all(feature = "isal", target_arch = "x86_64"))]
        "isal-dot" => {
            let t = tcpnc_field::isal::IsalCoefs::new(&coefs).unwrap();
            (0..calls).for_each(|_| {
                tcpnc_field::isal::dot_prod_avx2(black_box(&mut dst), &srcs, &t).unwrap()
            })
        }
        other => panic!("unknown kernel {other}"),
    }
    black_box(&dst);
}
