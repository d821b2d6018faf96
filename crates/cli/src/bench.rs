//! `tcpnc bench codec`: region-kernel and codec throughput on 1500-byte packets, single core,
//! all in one run (DESIGN.md "Measures of success": encoder and decoder at W = 8, 16, 32, 64 in
//! packets/s, beside memcpy measured in the same run).
//!
//! * Every figure is the best rate over ~1 ms slices of its measurement (see `rate`), so that time
//!   lost to other processes on a shared machine does not count against the code measured.
//! * `memcpy_gbps`, `mul_add_gbps`: one cache-hot, 64-byte-aligned 1500-byte buffer into another.
//! * `encode_pps[W]`: steady state of a dense encoder holding W symbols: drop the oldest, push a
//!   new 1500-byte symbol, emit one seeded combination of the window.
//! * `decode_pps[W]`: the decoder consuming a pre-generated lossless dense sliding-window stream
//!   (every packet innovative, each decodes one symbol): expand the seed, eliminate, poll the
//!   decoded symbol, drop the one leaving the window. The stream is first decoded once untimed
//!   and checked symbol by symbol.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde::Serialize;
use tcpnc_codec::{
    Decoder, DecoderConfig, EmissionKind, Encoder, EncoderConfig, Mode, Outcome, SplitMix64,
};
use tcpnc_field::Tier;

/// Packet size of every measurement.
const PACKET: usize = 1500;
/// Coding windows measured.
const WINDOWS: [usize; 4] = [8, 16, 32, 64];
/// Distinct source packets cycled through by the encoder measurement.
const POOL: usize = 64;
/// Packets in each pre-generated decoder stream: 768 KB, which stays in a 1 MB L2 cache, like
/// a packet a receiver has just read from its socket.
const STREAM: usize = 512;

/// Arguments of `tcpnc bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// What to measure.
    #[arg(value_enum)]
    pub target: BenchTarget,
    /// Print exactly one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Force a GF(2^8) kernel tier by name (scalar, ssse3, avx2, avx512bw, gfni-avx,
    /// gfni-avx512); the default is the best this CPU supports.
    #[arg(long)]
    pub tier: Option<String>,
    /// Seconds spent on each of the ten measurements.
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
}

/// What `tcpnc bench` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchTarget {
    /// GF(2^8) region kernels, encoder and decoder.
    Codec,
}

/// The result of `tcpnc bench codec`, printed as JSON with `--json`.
#[derive(Debug, Clone, Serialize)]
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
}

/// Runs `tcpnc bench`.
pub fn run(args: &BenchArgs) -> Result<()> {
    match args.target {
        BenchTarget::Codec => {
            ensure!(
                args.seconds.is_finite() && args.seconds > 0.0 && args.seconds <= 60.0,
                "--seconds must be in (0, 60]"
            );
            if let Some(name) = &args.tier {
                force_tier(name)?;
            }
            let report = measure_codec(Duration::from_secs_f64(args.seconds), STREAM)?;
            if args.json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                print!("{}", render_table(&report));
            }
            Ok(())
        }
    }
}

fn force_tier(name: &str) -> Result<()> {
    let Some(tier) = Tier::from_name(name) else {
        let names: Vec<&str> = Tier::ALL.iter().map(|t| t.name()).collect();
        bail!(
            "unknown GF(2^8) tier `{name}`; known tiers: {}",
            names.join(", ")
        );
    };
    tcpnc_field::force_tier(tier).with_context(|| format!("cannot force tier `{name}`"))
}

/// Measures everything with `budget` per measurement and decoder streams of `stream` packets.
pub fn measure_codec(budget: Duration, stream: usize) -> Result<CodecReport> {
    let pool: Vec<Vec<u8>> = (0..POOL as u64).map(random_packet).collect();
    let memcpy = measure_memcpy(budget);
    let mul_add = measure_mul_add(budget);
    let mut encode_pps = BTreeMap::new();
    let mut decode_pps = BTreeMap::new();
    for window in WINDOWS {
        encode_pps.insert(window.to_string(), measure_encode(budget, window, &pool)?);
    }
    for window in WINDOWS {
        decode_pps.insert(
            window.to_string(),
            measure_decode(budget, window, stream, &pool)?,
        );
    }
    Ok(CodecReport {
        tier: tcpnc_field::selected_tier().name().to_owned(),
        packet_bytes: PACKET,
        seconds_per_measurement: budget.as_secs_f64(),
        memcpy_gbps: memcpy * PACKET as f64 / 1e9,
        mul_add_gbps: mul_add * PACKET as f64 / 1e9,
        encode_pps,
        decode_pps,
    })
}

/// Calls `step` repeatedly for about `budget` (after a warm-up of a tenth of it) and returns
/// calls per second: the best rate over slices of about a millisecond. On a shared machine a
/// mean over the whole budget mostly measures how much of it other processes took; the best
/// slice is the rate of this code when it has the core (the same filter as the field crate's
/// `region_table` benchmark).
fn rate(budget: Duration, mut step: impl FnMut()) -> f64 {
    let warm_up = Instant::now();
    while warm_up.elapsed() < budget / 10 {
        step();
    }
    let slice = (budget / 8).min(Duration::from_millis(1));
    // Calls per slice: doubled until one batch takes at least a slice.
    let mut batch: u64 = 1;
    let mut best = 0.0f64;
    let start = Instant::now();
    loop {
        let t = Instant::now();
        for _ in 0..batch {
            step();
        }
        let elapsed = t.elapsed();
        if elapsed < slice {
            batch *= 2;
        } else {
            best = best.max(batch as f64 / elapsed.as_secs_f64());
        }
        if start.elapsed() >= budget {
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

fn measure_memcpy(budget: Duration) -> f64 {
    let (src, mut dst) = aligned_pair();
    rate(budget, || {
        dst.0.copy_from_slice(black_box(&src.0));
        black_box(&mut dst.0);
    })
}

fn measure_mul_add(budget: Duration) -> f64 {
    let (src, mut dst) = aligned_pair();
    rate(budget, || {
        tcpnc_field::mul_add(&mut dst.0, black_box(&src.0), black_box(0x57));
        black_box(&mut dst.0);
    })
}

fn dense_encoder(window: usize) -> Encoder {
    Encoder::new(EncoderConfig {
        mode: Mode::Dense,
        max_symbols: window,
        max_symbol_len: PACKET,
    })
}

fn measure_encode(budget: Duration, window: usize, pool: &[Vec<u8>]) -> Result<f64> {
    let mut encoder = dense_encoder(window);
    for packet in pool.iter().cycle().take(window) {
        encoder.push(packet)?;
    }
    let mut out = Vec::with_capacity(PACKET);
    let mut seed = 0u32;
    let mut failure = None;
    let pps = rate(budget, || {
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
        Some(error) => Err(error).context("encoder failed during the benchmark"),
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

fn dense_stream(window: usize, len: usize, pool: &[Vec<u8>]) -> Result<Vec<Coded>> {
    let mut encoder = dense_encoder(window);
    let mut out = Vec::new();
    let mut stream = Vec::with_capacity(len);
    for k in 0..len as u64 {
        encoder.drop_below((k + 1).saturating_sub(window as u64));
        encoder.push(&pool[k as usize % pool.len()])?;
        let seed = (k as u32).wrapping_mul(0x9E37_79B9);
        let emission = encoder.next_emission(window, seed, &mut out)?;
        ensure!(
            emission.kind == EmissionKind::Combination { seed },
            "dense mode emits combinations"
        );
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

fn measure_decode(budget: Duration, window: usize, len: usize, pool: &[Vec<u8>]) -> Result<f64> {
    let stream = dense_stream(window, len, pool)?;
    // Untimed check: every packet is innovative and decodes its newest symbol correctly.
    let mut decoder = stream_decoder(window);
    for (k, coded) in stream.iter().enumerate() {
        let receipt =
            decoder.receive_seeded(coded.first, coded.count, coded.seed, &coded.payload)?;
        ensure!(
            receipt.outcome == Outcome::Innovative,
            "packet {k} was not innovative"
        );
        let (index, symbol) = decoder.poll_decoded().context("nothing decoded")?;
        ensure!(
            symbol == pool[index as usize % pool.len()],
            "symbol {index} decoded wrongly"
        );
        decoder.drop_below((coded.first + coded.count as u64).saturating_sub(window as u64));
    }
    let mut decoder = stream_decoder(window);
    let mut position = 0;
    let mut failure = None;
    let pps = rate(budget, || {
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
        Some(error) => Err(error).context("decoder failed during the benchmark"),
        None => Ok(pps),
    }
}

fn random_packet(seed: u64) -> Vec<u8> {
    let mut rng = SplitMix64::new(seed);
    (0..PACKET).map(|_| rng.next_u64() as u8).collect()
}

fn render_table(report: &CodecReport) -> String {
    let mut out = format!(
        "tcpnc bench codec: GF(2^8) tier {}, {}-byte packets, {:.1} s per measurement, one core\n\n",
        report.tier, report.packet_bytes, report.seconds_per_measurement
    );
    out += &format!("memcpy    {:>8.2} GB/s\n", report.memcpy_gbps);
    out += &format!("mul_add   {:>8.2} GB/s\n\n", report.mul_add_gbps);
    out += "window   encode (packets/s)   decode (packets/s)\n";
    for window in WINDOWS {
        let key = window.to_string();
        out += &format!(
            "W={:<5} {:>19.0} {:>20.0}\n",
            window, report.encode_pps[&key], report.decode_pps[&key]
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_run_produces_the_documented_json_shape() {
        let report = measure_codec(Duration::from_millis(2), 80).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
        assert!(json["tier"].is_string());
        for key in ["memcpy_gbps", "mul_add_gbps"] {
            assert!(json[key].as_f64().unwrap() > 0.0, "{key}");
        }
        for key in ["encode_pps", "decode_pps"] {
            for window in ["8", "16", "32", "64"] {
                assert!(json[key][window].as_f64().unwrap() > 0.0, "{key}[{window}]");
            }
        }
        let table = render_table(&report);
        assert!(table.contains("W=64"));
    }

    #[test]
    fn unknown_tier_is_a_clear_error() {
        let error = force_tier("no-such-tier").unwrap_err().to_string();
        assert!(error.contains("known tiers"), "{error}");
    }
}
