//! Region-kernel throughput on cache-hot 1400-byte (packet) and 64 KiB (block) buffers, per
//! available tier.
//!
//! Run: `cargo bench -p tcpnc-field --bench region` (add `-- --quick` for a short run).
//! Throughput is bytes of `dst` per call for `memcpy`, `mul_add` and `mul_region`, and bytes of
//! *source* consumed (W × size) for `dot` with W = 8, 12, 16. Tiers this CPU lacks are listed
//! as skipped. `region_table` prints the same kernels as a best-of-batches table (and ISA-L
//! beside them with `--features isal`).

mod common;

use std::hint::black_box;

use common::bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tcpnc_field::region::{Tier, with_tier};

const SIZES: [usize; 2] = [1400, 65536];
const DOTS: [usize; 3] = [8, 12, 16];

fn region(c: &mut Criterion) {
    let tiers: Vec<_> = Tier::ALL
        .into_iter()
        .filter_map(|t| match with_tier(t) {
            Ok(k) => Some(k),
            Err(e) => {
                eprintln!("skipped: {e}");
                None
            }
        })
        .collect();
    for len in SIZES {
        let src = bytes(1, len);
        let mut dst = bytes(2, len);
        let sources: Vec<Vec<u8>> = (0..16).map(|k| bytes(10 + k as u64, len)).collect();
        let srcs: Vec<&[u8]> = sources.iter().map(Vec::as_slice).collect();
        let coefs: Vec<u8> = (0..16u8).map(|k| k.wrapping_mul(37) | 2).collect();

        let mut g = c.benchmark_group(format!("memcpy/{len}"));
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_function("memcpy", |b| {
            b.iter(|| black_box(&mut dst[..]).copy_from_slice(black_box(&src)))
        });
        g.finish();

        let mut g = c.benchmark_group(format!("mul_add/{len}"));
        g.throughput(Throughput::Bytes(len as u64));
        for &k in &tiers {
            g.bench_function(k.tier().name(), |b| {
                b.iter(|| k.mul_add(black_box(&mut dst), black_box(&src), black_box(0x53)))
            });
        }
        g.finish();

        let mut g = c.benchmark_group(format!("mul_region/{len}"));
        g.throughput(Throughput::Bytes(len as u64));
        for &k in &tiers {
            g.bench_function(k.tier().name(), |b| {
                b.iter(|| k.mul_region(black_box(&mut dst), black_box(0x53)))
            });
        }
        g.finish();

        for w in DOTS {
            let mut g = c.benchmark_group(format!("dot{w}/{len}"));
            g.throughput(Throughput::Bytes((w * len) as u64));
            for &k in &tiers {
                g.bench_function(k.tier().name(), |b| {
                    b.iter(|| {
                        k.dot(
                            black_box(&mut dst),
                            black_box(&srcs[..w]),
                            black_box(&coefs),
                        )
                    })
                });
            }
            g.finish();
        }
    }
}

criterion_group!(benches, region);
criterion_main!(benches);
