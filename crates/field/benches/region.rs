//! Region-kernel throughput on one packet-sized (1500-byte), cache-hot buffer, per available tier.
//!
//! Run: `cargo bench -p tcpnc-field --bench region` (add `-- --quick` for a short run).
//! Throughput is bytes of `dst` per call for `memcpy`, `mul_add` and `mul_region`, and bytes of
//! *source* consumed (16 × 1500) for `dot16`. Tiers this CPU lacks are listed as skipped.

mod common;

use std::hint::black_box;

use common::bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tcpnc_field::region::{Tier, with_tier};

const LEN: usize = 1500;
const SOURCES: usize = 16;

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
    let src = bytes(1, LEN);
    let mut dst = bytes(2, LEN);
    let sources: Vec<Vec<u8>> = (0..SOURCES).map(|k| bytes(10 + k as u64, LEN)).collect();
    let srcs: Vec<&[u8]> = sources.iter().map(Vec::as_slice).collect();
    let coefs: Vec<u8> = (0..SOURCES)
        .map(|k| (k as u8).wrapping_mul(37) | 2)
        .collect();

    let mut g = c.benchmark_group("memcpy");
    g.throughput(Throughput::Bytes(LEN as u64));
    g.bench_function("1500", |b| {
        b.iter(|| black_box(&mut dst[..]).copy_from_slice(black_box(&src)))
    });
    g.finish();

    let mut g = c.benchmark_group("mul_add");
    g.throughput(Throughput::Bytes(LEN as u64));
    for &k in &tiers {
        g.bench_function(k.tier().name(), |b| {
            b.iter(|| k.mul_add(black_box(&mut dst), black_box(&src), black_box(0x53)))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("mul_region");
    g.throughput(Throughput::Bytes(LEN as u64));
    for &k in &tiers {
        g.bench_function(k.tier().name(), |b| {
            b.iter(|| k.mul_region(black_box(&mut dst), black_box(0x53)))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("dot16");
    g.throughput(Throughput::Bytes((SOURCES * LEN) as u64));
    for &k in &tiers {
        g.bench_function(k.tier().name(), |b| {
            b.iter(|| k.dot(black_box(&mut dst), black_box(&srcs), black_box(&coefs)))
        });
    }
    g.finish();
}

criterion_group!(benches, region);
criterion_main!(benches);
