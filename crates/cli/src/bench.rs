//! `tcpnc bench codec`: flags and printing. The measurements themselves live with the code
//! they measure, in [`tcpnc_codec::bench`] (region kernels, the encoder's combination routine
//! that the engine's sender runs, the decoder); this module passes them the clock.
//! `tcpnc bench gateway` is wired in `bench_gateway.rs`.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use tcpnc_codec::bench::{CodecReport, STREAM, WINDOWS};
use tcpnc_field::Tier;

/// Arguments of `tcpnc bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// What to measure.
    #[command(subcommand)]
    pub target: BenchTarget,
}

/// What `tcpnc bench` measures.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum BenchTarget {
    /// GF(2^8) region kernels, encoder and decoder.
    Codec(CodecArgs),
    /// One real gateway (reader, owner and worker threads) on in-memory devices against an
    /// in-process driver playing its local TCP senders and its remote peer: goodput and the
    /// gateway's own CPU per GB.
    Gateway(Box<crate::bench_gateway::GatewayArgs>),
}

/// Arguments of `tcpnc bench codec`.
#[derive(Debug, Clone, clap::Args)]
pub struct CodecArgs {
    /// Print exactly one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Force a GF(2^8) kernel tier by name (scalar, ssse3, avx2, avx512bw, gfni-avx,
    /// gfni-avx512); the default is the best this CPU supports.
    #[arg(long)]
    pub tier: Option<String>,
    /// Seconds spent on each measurement (ten codec measurements, then each kernel point per
    /// implementation).
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
}

/// Runs `tcpnc bench`.
pub fn run(args: &BenchArgs) -> Result<()> {
    match &args.target {
        BenchTarget::Codec(a) => run_codec(a),
        BenchTarget::Gateway(a) => crate::bench_gateway::run(a),
    }
}

fn run_codec(args: &CodecArgs) -> Result<()> {
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

/// Forces the GF(2^8) kernel tier named `name` (`--tier`).
pub(crate) fn force_tier(name: &str) -> Result<()> {
    let Some(tier) = Tier::from_name(name) else {
        let names: Vec<&str> = Tier::ALL.iter().map(|t| t.name()).collect();
        bail!(
            "unknown GF(2^8) tier `{name}`; known tiers: {}",
            names.join(", ")
        );
    };
    tcpnc_field::force_tier(tier).with_context(|| format!("cannot force tier `{name}`"))
}

/// Runs the codec measurements with the process clock.
pub fn measure_codec(budget: Duration, stream: usize) -> Result<CodecReport> {
    let origin = Instant::now();
    let mut now = || origin.elapsed();
    Ok(tcpnc_codec::bench::measure_codec(budget, stream, &mut now)?)
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
    out += &format!(
        "\nregion kernels, GB/s (dot: source bytes), tcpnc tier {}\nbeside ISA-L avx2: {}\nbeside ISA-L avx512: {}\n",
        report.tier, report.isal, report.isal_avx512
    );
    out += &format!(
        "(B/cycle at the {:.2} GHz clock estimated in this run)\n",
        report.clock_ghz
    );
    out += "kernel   sources    bytes      tcpnc  B/cycle  \
            ISA-L avx2  B/cycle  tcpnc/ISA-L  ISA-L avx512  B/cycle  tcpnc/ISA-L\n";
    let per_cycle = |gbps: f64| gbps / report.clock_ghz;
    for k in &report.kernels {
        let column = |isal: Option<f64>, width: usize| match isal {
            Some(i) => format!(
                "{i:>width$.2} {:>8.2} {:>12.2}",
                per_cycle(i),
                k.tcpnc_gbps / i
            ),
            None => format!("{:>width$} {:>8} {:>12}", "-", "-", "-"),
        };
        let isal = format!(
            "{} {}",
            column(k.isal_gbps, 11),
            column(k.isal_avx512_gbps, 13)
        );
        out += &format!(
            "{:<8} {:>7} {:>8} {:>10.2} {:>8.2} {isal}\n",
            k.kernel,
            k.sources,
            k.bytes,
            k.tcpnc_gbps,
            per_cycle(k.tcpnc_gbps)
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
        for key in ["memcpy_gbps", "mul_add_gbps", "clock_ghz"] {
            assert!(json[key].as_f64().unwrap() > 0.0, "{key}");
        }
        for key in ["encode_pps", "decode_pps"] {
            for window in ["8", "16", "32", "64"] {
                assert!(json[key][window].as_f64().unwrap() > 0.0, "{key}[{window}]");
            }
        }
        assert!(json["isal"].is_string() && json["isal_avx512"].is_string());
        let kernels = json["kernels"].as_array().unwrap();
        assert_eq!(kernels.len(), 8);
        for k in kernels {
            assert!(k["tcpnc_gbps"].as_f64().unwrap() > 0.0, "{k}");
            assert!(k["kernel"].is_string() && k["bytes"].as_u64().unwrap() >= 1400);
            assert_eq!(
                k["isal_gbps"].is_f64(),
                tcpnc_codec::bench::isal_runs(),
                "{k}"
            );
            assert_eq!(
                k["isal_avx512_gbps"].is_f64(),
                tcpnc_codec::bench::isal_avx512_runs(),
                "{k}"
            );
        }
        let table = render_table(&report);
        assert!(table.contains("W=64"));
        assert!(table.contains("tcpnc/ISA-L"));
    }

    #[test]
    fn unknown_tier_is_a_clear_error() {
        let error = force_tier("no-such-tier").unwrap_err().to_string();
        assert!(error.contains("known tiers"), "{error}");
    }
}
