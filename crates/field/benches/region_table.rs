//! A preemption-robust throughput table for `docs/field.md`: for every available tier, the best
//! (minimum) time of many short batches of calls on cache-hot 1500-byte buffers. The minimum
//! filters out time slices lost to other processes, which on a shared machine distort
//! criterion's means.
//!
//! Run: `cargo bench -p tcpnc-field --bench region_table`.
//! GB/s are 10^9 bytes per second: `dst` bytes for memcpy / mul_add / mul_region, source bytes
//! (W × 1500) for dot.

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use common::bytes;
use tcpnc_field::region::{Kernels, Tier, with_tier};

const LEN: usize = 1500;
const BATCH: u32 = 200;
const BATCHES: u32 = 300;

/// Best per-call time over `BATCHES` batches of `BATCH` calls.
fn best(mut f: impl FnMut()) -> Duration {
    for _ in 0..BATCH {
        f();
    }
    (0..BATCHES)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..BATCH {
                f();
            }
            t.elapsed() / BATCH
        })
        .min()
        .unwrap()
}

fn gbps(bytes: usize, t: Duration) -> String {
    format!("{:6.2}", bytes as f64 / t.as_nanos() as f64)
}

fn main() {
    let src = bytes(1, LEN);
    let mut dst = bytes(2, LEN);
    let sources: Vec<Vec<u8>> = (0..64).map(|k| bytes(10 + k, LEN)).collect();
    let srcs: Vec<&[u8]> = sources.iter().map(Vec::as_slice).collect();
    let coefs: Vec<u8> = (0..64u8).map(|k| k.wrapping_mul(37) | 2).collect();

    let t = best(|| black_box(&mut dst[..]).copy_from_slice(black_box(&src)));
    println!("memcpy 1500 B: {} GB/s ({:?}/call)", gbps(LEN, t), t);
    println!();
    println!("| tier | mul_add | mul_region | dot W=8 | dot W=16 | dot W=64 |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for tier in Tier::ALL {
        let k: Kernels = match with_tier(tier) {
            Ok(k) => k,
            Err(e) => {
                println!("| {tier} | skipped: {e} | | | | |");
                continue;
            }
        };
        let ma = best(|| k.mul_add(black_box(&mut dst), black_box(&src), black_box(0x53)));
        let mr = best(|| k.mul_region(black_box(&mut dst), black_box(0x53)));
        let mut dots = Vec::new();
        for w in [8, 16, 64] {
            let t = best(|| {
                k.dot(
                    black_box(&mut dst),
                    black_box(&srcs[..w]),
                    black_box(&coefs),
                )
            });
            dots.push(gbps(w * LEN, t));
        }
        println!(
            "| {tier} | {} | {} | {} | {} | {} |",
            gbps(LEN, ma),
            gbps(LEN, mr),
            dots[0],
            dots[1],
            dots[2]
        );
    }
}
