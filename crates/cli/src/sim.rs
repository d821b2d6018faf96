//! `tcpnc sim`: one deterministic virtual-time bulk transfer, printed as a summary or JSON
//! (wiring only: the run is `tcpnc_sim::run_spec::RunSpec`).

use std::time::Instant;

use anyhow::{Context, Result};
use tcpnc_sim::run_spec::{RunSpec, summary};

/// Arguments of `tcpnc sim`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimArgs {
    /// The run: path, TCP, transfer and coding policies.
    #[command(flatten)]
    pub spec: RunSpec,
    /// Print one JSON object instead of a summary.
    #[arg(long)]
    pub json: bool,
    /// Write the time series (per 0.1 s: decoded packets, goodput, duplicate ACKs at the
    /// sender, retransmissions) to FILE as CSV; the JSON gains the decoding throughput's mean
    /// and standard deviation (Karafillis et al. §III).
    #[arg(long, value_name = "FILE")]
    pub series: Option<std::path::PathBuf>,
}

/// Runs `tcpnc sim`.
pub fn run(args: &SimArgs) -> Result<()> {
    let start = Instant::now();
    let interval = args
        .series
        .as_ref()
        .map(|_| tcpnc_sim::series::SERIES_INTERVAL);
    let report = args.spec.run_with_series(interval)?;
    let wall_s = start.elapsed().as_secs_f64();
    if let (Some(path), Some(series)) = (&args.series, &report.series) {
        std::fs::write(path, series.to_csv())
            .with_context(|| format!("writing --series {}", path.display()))?;
    }
    if args.json {
        println!("{}", args.spec.result_json(&report, wall_s));
    } else {
        println!("{}", summary(&report, wall_s));
    }
    Ok(())
}
