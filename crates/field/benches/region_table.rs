//! A preemption-robust throughput table for `docs/field.md`: for every available tier, the best
//! (minimum) time of many short batches of calls on cache-hot buffers of 1400 B (a packet) and
//! 64 KiB (a block). The minimum filters out time slices lost to other processes, which on a
//! shared machine distort criterion's means. With `--features isal`, Intel ISA-L's AVX2 kernels
//! (`gf_vect_mad_avx2`, `gf_vect_dot_prod_avx2`, tables precomputed) get a row of their own.
//!
//! Run: `cargo bench -p tcpnc-field --bench region_table [--features isal]`.
//! GB/s are 10^9 bytes per second: `dst` bytes for memcpy / mul_add / mul_region, source bytes
//! (W × size) for dot.

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use common::bytes;
use tcpnc_field::region::{Kernels, Tier, with_tier};

const SIZES: [usize; 2] = [1400, 65536];
const DOTS: [usize; 4] = [8, 12, 16, 64];

/// Best per-call time over batches of calls, about 5 × 10^7 bytes processed per batch set.
fn best(bytes: usize, mut f: impl FnMut()) -> Duration {
    let batch = (200_000 / bytes).clamp(4, 200) as u32;
    let batches = 300;
    for _ in 0..batch {
        f();
    }
    (0..batches)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..batch {
                f();
            }
            t.elapsed() / batch
        })
        .min()
        .unwrap()
}

fn gbps(bytes: usize, t: Duration) -> String {
    format!("{:6.2}", bytes as f64 / t.as_nanos() as f64)
}

/// `len + 64` bytes; [`window`] is the `len` of them that start at a 64-byte boundary (as in
/// `tcpnc bench codec`), so every run sees the same alignment.
fn aligned(seed: u64, len: usize) -> Vec<u8> {
    bytes(seed, len + 64)
}

fn window(v: &mut [u8], len: usize) -> &mut [u8] {
    let skip = v.as_ptr().align_offset(64).min(64);
    &mut v[skip..skip + len]
}

struct Data {
    len: usize,
    src: Vec<u8>,
    dst: Vec<u8>,
    sources: Vec<Vec<u8>>,
    coefs: Vec<u8>,
}

fn row(name: &str, d: &mut Data, ours: Option<Kernels>) -> String {
    let len = d.len;
    let mut cells = vec![name.to_owned()];
    let src = &*window(&mut d.src, len);
    let (sources, coefs) = (&d.sources, &d.coefs);
    let srcs: Vec<&[u8]> = sources.iter().map(Vec::as_slice).collect();
    let dst = window(&mut d.dst, len);
    if let Some(k) = ours {
        cells.push(gbps(
            len,
            best(len, || {
                k.mul_add(black_box(dst), black_box(src), black_box(0x53))
            }),
        ));
        cells.push(gbps(
            len,
            best(len, || k.mul_region(black_box(dst), black_box(0x53))),
        ));
        for w in DOTS {
            let t = best(w * len, || {
                k.dot(black_box(dst), black_box(&srcs[..w]), black_box(coefs))
            });
            cells.push(gbps(w * len, t));
        }
    } else {
        isal_cells(&mut cells, len, dst, src, &srcs, coefs);
    }
    format!("| {} |", cells.join(" | "))
}

#[cfg(all(feature = "isal", target_arch = "x86_64"))]
fn isal_cells(
    cells: &mut Vec<String>,
    len: usize,
    dst: &mut [u8],
    src: &[u8],
    srcs: &[&[u8]],
    coefs: &[u8],
) {
    use tcpnc_field::isal;
    let one = isal::IsalCoefs::new(&coefs[..1]).unwrap();
    let t = best(len, || {
        isal::mad_avx2(black_box(dst), black_box(src), &one, 0).unwrap()
    });
    cells.push(gbps(len, t));
    cells.push("—".to_owned());
    for w in DOTS {
        let tables = isal::IsalCoefs::new(&coefs[..w]).unwrap();
        let t = best(w * len, || {
            isal::dot_prod_avx2(black_box(dst), black_box(&srcs[..w]), &tables).unwrap()
        });
        cells.push(gbps(w * len, t));
    }
}

#[cfg(not(all(feature = "isal", target_arch = "x86_64")))]
fn isal_cells(_: &mut Vec<String>, _: usize, _: &mut [u8], _: &[u8], _: &[&[u8]], _: &[u8]) {}

fn main() {
    for len in SIZES {
        let mut d = Data {
            len,
            src: aligned(1, len),
            dst: aligned(2, len),
            sources: (0..64).map(|k| bytes(10 + k, len)).collect(),
            coefs: (0..64u8).map(|k| k.wrapping_mul(37) | 2).collect(),
        };
        let t = best(len, || {
            black_box(&mut d.dst[..len]).copy_from_slice(black_box(&d.src[..len]))
        });
        println!("\nmemcpy {len} B: {} GB/s ({t:?}/call)\n", gbps(len, t));
        println!("| {len} B | mul_add | mul_region | dot W=8 | dot W=12 | dot W=16 | dot W=64 |");
        println!("| --- | --- | --- | --- | --- | --- | --- |");
        for tier in Tier::ALL {
            match with_tier(tier) {
                Ok(k) => println!("{}", row(tier.name(), &mut d, Some(k))),
                Err(e) => println!("| {tier} | skipped: {e} | | | | | |"),
            }
        }
        if cfg!(all(feature = "isal", target_arch = "x86_64")) && Tier::Avx2.is_available() {
            println!("{}", row("ISA-L 2.30 avx2", &mut d, None));
        }
    }
}
