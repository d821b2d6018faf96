//! The measurements of `tcpnc bench codec`: region-kernel and codec throughput on 1500-byte
//! packets, single core, all in one run (DESIGN.md "Measures of success": encoder and decoder at
//! W = 8, 16, 32, 64 in packets/s, beside memcpy measured in the same run). The cli only parses
//! the flags, passes a clock and prints.
//!
//! * Sans-IO like the rest of the crate: the caller passes the clock (`now`, time since any
//!   origin), so this module never reads one.
//! * Every figure is the best rate over ~1 ms slices of its measurement (see [`rate`]), so that
//!   time lost to other processes on a shared machine does not count against the code measured.
//! * `memcpy_gbps`, `mul_add_gbps`: one cache-hot 1500-byte buffer into another.
//! * `encode_pps[W]`: steady state of a dense [`Encoder`] holding W symbols: drop the oldest,
//!   push a new 1500-byte symbol, emit one seeded combination of the window. The combination is
//!   formed by [`combine`](crate::combine), the routine the engine's sender calls over its
//!   coding buffer, so this is the product's encoding path.
//! * `decode_pps[W]`: the decoder consuming a pre-generated lossless dense sliding-window stream
//!   (every packet innovative, each decodes one symbol): expand the seed, eliminate, poll the
//!   decoded symbol, drop the one leaving the window. The stream is first decoded once untimed
//!   and checked symbol by symbol.
//! * `kernels`: our `mul_add` and W-source `dot` beside Intel ISA-L's at 1400 B and 64 KiB
//!   (see [`kernels`]; ISA-L only with feature `isal`).

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

mod kernels;

pub use kernels::{
    DOT_SOURCES, KERNEL_SIZES, KernelFigure, isal_avx512_runs, isal_avx512_status, isal_runs,
    isal_status, measure_clock_ghz,
};

use crate::{
    CodingScheme, DecodeError, Decoder, DecoderConfig, EmissionKind, EncodeError, Encoder,
    EncoderConfig, Outcome, SplitMix64,
};

/// Packet size of every measurement.
pub const PACKET: usize = 1500;
/// Coding windows measured.
pub const WINDOWS: [usize; 4] = [8, 16, 32, 64];
/// Distinct source packets cycled through by the encoder measurement.
const POOL: usize = 64;
/// Packets in each pre-generated decoder stream: 768 KB, which stays in a 1 MB L2 cache, like
/// a packet a receiver has just read from its socket.
pub const STREAM: usize = 512;

/// What one `tcpnc bench codec` run measured (its `--json` output, with feature `serde`).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CodecReport {
    /// Name of the GF(2^8) tier used.
    pub tier: String,
    /// Bytes per packet.
    pub packet_bytes: usize,
    /// Seconds per measurement.
    pub seconds_per_measurement: f64,
    /// memcpy of one 1500-byte packet, GB/s.
    pub memcpy_gbps: f64,
    /// `mul_add` of one 1500-byte packet, GB/s.
    pub mul_add_gbps: f64,
    /// Dense encoder, coded packets per second, by window.
    pub encode_pps: BTreeMap<String, f64>,
    /// Decoder, innovative packets consumed per second, by window.
    pub decode_pps: BTreeMap<String, f64>,
    /// Core clock estimated in the same run (GHz; see [`measure_clock_ghz`]).
    pub clock_ghz: f64,
    /// What the `isal_gbps` figures of `kernels` measure, or why they are absent.
    pub isal: String,
    /// What the `isal_avx512_gbps` figures of `kernels` measure, or why they are absent.
    pub isal_avx512: String,
    /// `mul_add` and W-source `dot`, ours beside ISA-L's, per region size.
    pub kernels: Vec<KernelFigure>,
}

/// Why a measurement failed (the codec misbehaved on the benchmark's own stream).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BenchError {
    /// The encoder refused an operation.
    #[error("encoder failed during the benchmark: {0}")]
    Encode(#[from] EncodeError),
    /// The decoder refused a packet.
    #[error("decoder failed during the benchmark: {0}")]
    Decode(#[from] DecodeError),
    /// A dense encoder emitted something other than a seeded combination.
    #[error("dense mode emitted a source packet")]
    NotCombination,
    /// A packet of the lossless stream was not innovative.
    #[error("packet {0} was not innovative")]
    NotInnovative(usize),
    /// A packet of the lossless stream decoded nothing.
    #[error("packet {0} decoded nothing")]
    NothingDecoded(usize),
    /// A symbol decoded to the wrong bytes.
    #[error("symbol {0} decoded wrongly")]
    WrongSymbol(u64),
}

/// Measures everything with `budget` per measurement and decoder streams of `stream` packets;
/// `now` is the caller's clock.
pub fn measure_codec(
    budget: Duration,
    stream: usize,
    now: &mut dyn FnMut() -> Duration,
) -> Result<CodecReport, BenchError> {
    let pool: Vec<Vec<u8>> = (0..POOL as u64).map(random_packet).collect();
    let memcpy = measure_memcpy(budget, now);
    let mul_add = measure_mul_add(budget, now);
    let kernels = kernels::measure_kernels(budget, now);
    let clock_ghz = measure_clock_ghz(budget, now);
    let mut encode_pps = BTreeMap::new();
    let mut decode_pps = BTreeMap::new();
    for window in WINDOWS {
        let pps = measure_encode(budget, window, &pool, now)?;
        encode_pps.insert(window.to_string(), pps);
    }
    for window in WINDOWS {
        let pps = measure_decode(budget, window, stream, &pool, now)?;
        decode_pps.insert(window.to_string(), pps);
    }
    Ok(CodecReport {
        tier: tcpnc_field::selected_tier().name().to_owned(),
        packet_bytes: PACKET,
        seconds_per_measurement: budget.as_secs_f64(),
        memcpy_gbps: memcpy * PACKET as f64 / 1e9,
        mul_add_gbps: mul_add * PACKET as f64 / 1e9,
        encode_pps,
        decode_pps,
        clock_ghz,
        isal: isal_status(),
        isal_avx512: isal_avx512_status(),
        kernels,
    })
}

/// Calls `step` repeatedly for about `budget` (after a warm-up of a tenth of it) and returns
/// calls per second: the best rate over slices of about a millisecond. On a shared machine a
/// mean over the whole budget mostly measures how much of it other processes took; the best
/// slice is the rate of this code when it has the core (the same filter as the field crate's
/// `region_table` benchmark).
pub fn rate(budget: Duration, now: &mut dyn FnMut() -> Duration, mut step: impl FnMut()) -> f64 {
    let warm_up = now();
    while now().saturating_sub(warm_up) < budget / 10 {
        step();
    }
    let slice = (budget / 8).min(Duration::from_millis(1));
    // Calls per slice: doubled until one batch takes at least a slice.
    let mut batch: u64 = 1;
    let mut best = 0.0f64;
    let start = now();
    loop {
        let t = now();
        for _ in 0..batch {
            step();
        }
        let elapsed = now().saturating_sub(t);
        if elapsed < slice {
            batch *= 2;
        } else {
            best = best.max(batch as f64 / elapsed.as_secs_f64());
        }
        if now().saturating_sub(start) >= budget {
            if best == 0.0 {
                best = batch as f64 / elapsed.as_secs_f64().max(1e-9);
            }
            return best;
        }
    }
}

#[repr(C, align(64))]
struct AlignedPacket([u8; PACKET]);

fn aligned_pair() -> (Box<AlignedPacket>, Box<AlignedPacket>) {
    let mut src = Box::new(AlignedPacket([0; PACKET]));
    src.0.copy_from_slice(&random_packet(u64::MAX));
    (src, Box::new(AlignedPacket([0; PACKET])))
}

fn measure_memcpy(budget: Duration, now: &mut dyn FnMut() -> Duration) -> f64 {
    let (src, mut dst) = aligned_pair();
    rate(budget, now, || {
        dst.0.copy_from_slice(black_box(&src.0));
        black_box(&mut dst.0);
    })
}

fn measure_mul_add(budget: Duration, now: &mut dyn FnMut() -> Duration) -> f64 {
    let (src, mut dst) = aligned_pair();
    rate(budget, now, || {
        tcpnc_field::mul_add(&mut dst.0, black_box(&src.0), black_box(0x57));
        black_box(&mut dst.0);
    })
}

fn dense_encoder(window: usize) -> Encoder {
    Encoder::new(EncoderConfig {
        mode: CodingScheme::Dense,
        max_symbols: window,
        max_symbol_len: PACKET,
    })
}

fn measure_encode(
    budget: Duration,
    window: usize,
    pool: &[Vec<u8>],
    now: &mut dyn FnMut() -> Duration,
) -> Result<f64, BenchError> {
    let mut encoder = dense_encoder(window);
    for packet in pool.iter().cycle().take(window) {
        encoder.push(packet)?;
    }
    let mut out = Vec::with_capacity(PACKET);
    let mut seed = 0u32;
    let mut failure = None;
    let pps = rate(budget, now, || {
        encoder.drop_below(encoder.end_index() + 1 - window as u64);
        let next = &pool[encoder.end_index() as usize % pool.len()];
        seed = seed.wrapping_add(1);
        let result = encoder
            .push(black_box(next))
            .and_then(|_| encoder.next_emission(window, seed, &mut out));
        if let Err(error) = result {
            failure = Some(error);
        }
        black_box(&out);
    });
    match failure {
        Some(error) => Err(error.into()),
        None => Ok(pps),
    }
}

/// One coded packet of a pre-generated stream.
struct Coded {
    first: u64,
    count: usize,
    seed: u32,
    payload: Vec<u8>,
}

fn dense_stream(window: usize, len: usize, pool: &[Vec<u8>]) -> Result<Vec<Coded>, BenchError> {
    let mut encoder = dense_encoder(window);
    let mut out = Vec::new();
    let mut stream = Vec::with_capacity(len);
    for k in 0..len as u64 {
        encoder.drop_below((k + 1).saturating_sub(window as u64));
        encoder.push(&pool[k as usize % pool.len()])?;
        let seed = (k as u32).wrapping_mul(0x9E37_79B9);
        let emission = encoder.next_emission(window, seed, &mut out)?;
        if emission.kind != (EmissionKind::Combination { seed }) {
            return Err(BenchError::NotCombination);
        }
        stream.push(Coded {
            first: emission.range.start,
            count: (emission.range.end - emission.range.start) as usize,
            seed,
            payload: out.clone(),
        });
    }
    Ok(stream)
}

fn stream_decoder(window: usize) -> Decoder {
    Decoder::new(DecoderConfig {
        max_rows: 2 * window,
        max_span: 4 * window as u64,
        max_symbol_len: PACKET,
    })
}

/// Untimed check: every packet of `stream` is innovative and decodes its newest symbol.
fn check_stream(window: usize, stream: &[Coded], pool: &[Vec<u8>]) -> Result<(), BenchError> {
    let mut decoder = stream_decoder(window);
    for (k, coded) in stream.iter().enumerate() {
        let receipt =
            decoder.receive_seeded(coded.first, coded.count, coded.seed, &coded.payload)?;
        if receipt.outcome != Outcome::Innovative {
            return Err(BenchError::NotInnovative(k));
        }
        let (index, symbol) = decoder
            .poll_decoded()
            .ok_or(BenchError::NothingDecoded(k))?;
        if symbol != pool[index as usize % pool.len()] {
            return Err(BenchError::WrongSymbol(index));
        }
        decoder.drop_below((coded.first + coded.count as u64).saturating_sub(window as u64));
    }
    Ok(())
}

fn measure_decode(
    budget: Duration,
    window: usize,
    len: usize,
    pool: &[Vec<u8>],
    now: &mut dyn FnMut() -> Duration,
) -> Result<f64, BenchError> {
    let stream = dense_stream(window, len, pool)?;
    check_stream(window, &stream, pool)?;
    let mut decoder = stream_decoder(window);
    let mut position = 0;
    let mut failure = None;
    let pps = rate(budget, now, || {
        if position == stream.len() {
            decoder = stream_decoder(window);
            position = 0;
        }
        let coded = &stream[position];
        position += 1;
        match decoder.receive_seeded(
            coded.first,
            coded.count,
            coded.seed,
            black_box(&coded.payload),
        ) {
            Ok(receipt) => {
                black_box(receipt);
            }
            Err(error) => failure = Some(error),
        }
        while let Some(decoded) = decoder.poll_decoded() {
            black_box(decoded);
        }
        decoder.drop_below((coded.first + coded.count as u64).saturating_sub(window as u64));
    });
    match failure {
        Some(error) => Err(error.into()),
        None => Ok(pps),
    }
}

fn random_packet(seed: u64) -> Vec<u8> {
    let mut rng = SplitMix64::new(seed);
    (0..PACKET).map(|_| rng.next_u64() as u8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clock that advances `tick` per reading: runs are deterministic and quick.
    fn ticking(tick: Duration) -> impl FnMut() -> Duration {
        let mut t = Duration::ZERO;
        move || {
            t += tick;
            t
        }
    }

    #[test]
    fn rate_is_calls_per_second_of_the_given_clock() {
        // The clock advances only when the step runs, 100 µs per call: 10 000 calls/s.
        let time = std::cell::Cell::new(Duration::ZERO);
        let mut clock = || time.get();
        let mut calls = 0u64;
        let r = rate(Duration::from_millis(50), &mut clock, || {
            calls += 1;
            time.set(time.get() + Duration::from_micros(100));
        });
        assert!((r - 10_000.0).abs() < 1e-6, "{r}");
        assert!(calls >= 500, "the budget is spent in calls: {calls}");
    }

    #[test]
    fn tiny_run_measures_every_window_and_checks_the_stream() {
        let mut clock = ticking(Duration::from_millis(1));
        let report = measure_codec(Duration::from_millis(2), 80, &mut clock).unwrap();
        assert_eq!(report.packet_bytes, PACKET);
        assert!(report.memcpy_gbps > 0.0 && report.mul_add_gbps > 0.0);
        for window in WINDOWS {
            assert!(report.encode_pps[&window.to_string()] > 0.0);
            assert!(report.decode_pps[&window.to_string()] > 0.0);
        }
    }

    #[test]
    fn the_stream_check_catches_a_corrupted_packet() {
        let pool: Vec<Vec<u8>> = (0..POOL as u64).map(random_packet).collect();
        let mut stream = dense_stream(8, 20, &pool).unwrap();
        check_stream(8, &stream, &pool).unwrap();
        stream[5].payload[0] ^= 1;
        assert_eq!(
            check_stream(8, &stream, &pool),
            Err(BenchError::WrongSymbol(5))
        );
    }
}
