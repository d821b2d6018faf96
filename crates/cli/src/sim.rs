//! `tcpnc sim`: one deterministic virtual-time transfer, printed as a summary or JSON
//! (wiring only: the run is `tcpnc_sim::run_spec::RunSpec`, the stream run
//! `tcpnc_sim::stream_run`).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use tcpnc_sim::run_spec::{RunSpec, summary};
use tcpnc_sim::stream_run::{StreamSpec, run_stream, stream_json, stream_series, stream_summary};
use tcpnc_stream::{SIM_DURATION_S, Trace, Workload};

/// Arguments of `tcpnc sim`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimArgs {
    /// The run: path, TCP, transfer and coding policies.
    #[command(flatten)]
    pub spec: RunSpec,
    /// The workload. Bulk: plain or nc (`--mode`). Stream: plain and nc side by side (nc with
    /// a fixed window and with VBNC unless `--window-policy` names one).
    #[arg(long, value_enum, default_value_t = Workload::default())]
    pub workload: Workload,
    /// The stream (`--workload stream`).
    #[command(flatten)]
    pub stream: StreamSpec,
    /// Frame trace file (`time_s,size_bytes` per line) instead of the synthetic model.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Write a series to FILE as CSV. Bulk transfers: per 0.1 s, decoded packets, goodput,
    /// duplicate ACKs at the sender, retransmissions, fast retransmits and the sender's flight
    /// size (smoltcp does not expose cwnd) (the JSON gains the decoding throughput's mean and
    /// standard deviation, Karafillis et al. §III). `--workload stream`: one row per frame of
    /// every scheme.
    #[arg(long, value_name = "FILE")]
    pub series: Option<PathBuf>,
    /// `--workload stream`: write latency over time, the latency CDF and jitter over time per
    /// scheme to DIR (stream-latency, stream-latency-cdf, stream-jitter; PNG and SVG).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Print one JSON object instead of a summary.
    #[arg(long)]
    pub json: bool,
}

/// Runs `tcpnc sim`.
pub fn run(args: &SimArgs) -> Result<()> {
    if args.workload == Workload::Stream {
        return run_stream_workload(args);
    }
    if args.trace.is_some() || args.plot.is_some() {
        bail!("--trace and --plot need --workload stream");
    }
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

/// `--workload stream`: the trace, every scheme, the summary or JSON, the series.
fn run_stream_workload(args: &SimArgs) -> Result<()> {
    let trace = match &args.trace {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading trace {}", path.display()))?;
            Trace::parse(&text).with_context(|| format!("trace {}", path.display()))?
        }
        None => args.stream.model(SIM_DURATION_S).generate(args.spec.seed)?,
    };
    let deadline = args
        .stream
        .deadline()
        .context("--deadline-ms must be a non-negative number")?;
    let start = Instant::now();
    let results = run_stream(&args.spec, &trace, deadline)?;
    let wall_s = start.elapsed().as_secs_f64();
    if let Some(path) = &args.series {
        std::fs::write(path, stream_series(&results))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(dir) = &args.plot {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let cases: Vec<(&str, &[tcpnc_stream::FrameRecord])> = results
            .iter()
            .map(|r| (r.scheme.as_str(), &r.records[..]))
            .collect();
        let p = args.spec.path();
        let title = format!(
            "sim: {:.1} Mbit/s stream, {} Mbit/s, {} ms, loss {}",
            trace.mean_bit_rate() / 1e6,
            p.rate_mbit,
            p.delay_ms,
            p.loss
        );
        tcpnc_experiment::stream_plot::write_stream_plots(&cases, dir, &title)?;
    }
    if args.json {
        let v = stream_json(&args.spec, &args.stream, &trace, &results, wall_s);
        println!("{v}");
    } else {
        println!("{}", stream_summary(&trace, &results));
    }
    Ok(())
}
