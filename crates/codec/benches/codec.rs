//! Encoder and decoder throughput at W = 8, 16, 32, 64 on 1500-byte packets (dense mode).
//!
//! `cargo bench -p tcpnc-codec`; `tcpnc bench codec` measures the same loops in one run.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tcpnc_codec::{CodingScheme, Decoder, DecoderConfig, EmissionKind, Encoder, EncoderConfig};

const PACKET: usize = 1500;
const WINDOWS: [usize; 4] = [8, 16, 32, 64];
const STREAM: usize = 1024;

fn symbol(index: u64) -> Vec<u8> {
    let mut rng = tcpnc_codec::SplitMix64::new(index);
    (0..PACKET).map(|_| rng.next_u64() as u8).collect()
}

fn empty_encoder(window: usize) -> Encoder {
    Encoder::new(EncoderConfig {
        mode: CodingScheme::Dense,
        max_symbols: window,
        max_symbol_len: PACKET,
    })
}

fn encoder(window: usize) -> Encoder {
    let mut enc = empty_encoder(window);
    for k in 0..window as u64 {
        enc.push(&symbol(k)).unwrap();
    }
    enc
}

/// `(first index, count, seed, payload)` of a lossless dense sliding-window stream.
fn stream(window: usize) -> Vec<(u64, usize, u32, Vec<u8>)> {
    let mut enc = empty_encoder(window);
    let mut out = Vec::new();
    (0..STREAM as u64)
        .map(|k| {
            enc.drop_below((k + 1).saturating_sub(window as u64));
            enc.push(&symbol(k % 97)).unwrap();
            let emission = enc.next_emission(window, k as u32, &mut out).unwrap();
            let EmissionKind::Combination { seed } = emission.kind else {
                unreachable!()
            };
            let count = (emission.range.end - emission.range.start) as usize;
            (emission.range.start, count, seed, out.clone())
        })
        .collect()
}

fn bench_encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("encode");
    group.throughput(Throughput::Elements(1));
    for window in WINDOWS {
        let mut enc = encoder(window);
        let fresh = symbol(7);
        let mut out = Vec::with_capacity(PACKET);
        let mut seed = 0u32;
        group.bench_function(format!("W={window}"), |b| {
            b.iter(|| {
                enc.drop_below(enc.end_index() + 1 - window as u64);
                enc.push(black_box(&fresh)).unwrap();
                seed = seed.wrapping_add(1);
                black_box(enc.next_emission(window, seed, &mut out).unwrap());
            })
        });
    }
    group.finish();
}

fn bench_decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode");
    group.throughput(Throughput::Elements(STREAM as u64));
    for window in WINDOWS {
        let packets = stream(window);
        group.bench_function(format!("W={window}"), |b| {
            b.iter(|| {
                let mut dec = Decoder::new(DecoderConfig {
                    max_rows: 2 * window,
                    max_span: 4 * window as u64,
                    max_symbol_len: PACKET,
                });
                for (first, count, seed, payload) in &packets {
                    let receipt = dec.receive_seeded(*first, *count, *seed, payload).unwrap();
                    black_box(receipt);
                    while let Some(decoded) = dec.poll_decoded() {
                        black_box(decoded);
                    }
                    dec.drop_below((first + *count as u64).saturating_sub(window as u64));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_encode, bench_decode);
criterion_main!(benches);
