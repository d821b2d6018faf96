//! `tcpnc lab stream`: the streaming workload on the lab (wiring only; see
//! `tcpnc_lab::stream`), and its two internal processes.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result, bail, ensure};
use clap::Args;
use serde_json::json;
use tcpnc_lab::speed::load_average;
use tcpnc_lab::stream::{self, CaseResult, StreamCase, StreamSettings};
use tcpnc_lab::{Lab, guard};
use tcpnc_settings::CongestionControl;
use tcpnc_stream::{LAB_DURATION_S, StreamSpec, Trace, series_csv};

use crate::lab::{CodingArgs, LabGateways, PathArgs, new_lab};

/// `tcpnc lab stream` (its help text is `LabCommand::Stream`'s).
#[derive(Debug, Clone, Args)]
pub struct StreamArgs {
    #[command(flatten)]
    pub path: PathArgs,
    #[command(flatten)]
    pub coding: CodingArgs,
    #[command(flatten)]
    pub stream: StreamSpec,
    /// Frame trace file (`time_s,size_bytes` per line) instead of the synthetic model.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Cases to run, in this order (comma-separated): plain-reno, plain-cubic, plain-bbr
    /// (gateways with coding off), nc-fixed, nc-vbnc (TCP/NC with --nc-cc and the fixed or the
    /// VBNC window policy).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "plain-reno,plain-cubic,plain-bbr,nc-fixed,nc-vbnc"
    )]
    pub cases: Vec<StreamCase>,
    /// Congestion control of the nc cases.
    #[arg(long, value_enum, default_value_t = CongestionControl::Cubic)]
    pub nc_cc: CongestionControl,
    /// Seed of the synthetic trace and of the frames' contents.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Bound on each case beyond the stream's length, seconds.
    #[arg(long, default_value_t = 600.0)]
    pub timeout_s: f64,
    /// Write every frame of every case to FILE as CSV:
    /// case,frame,size,sent_s,arrived_s,latency_ms,jitter_ms,intact (sent_s: the frame's
    /// scheduled write time from the stream's start).
    #[arg(long, value_name = "FILE")]
    pub series: Option<PathBuf>,
    /// Write latency over time, the latency CDF and jitter over time per case to DIR
    /// (stream-latency, stream-latency-cdf, stream-jitter; PNG and SVG).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Print one JSON object (every case's summary and whole setting set).
    #[arg(long)]
    pub json: bool,
}

/// `tcpnc lab stream-sink`.
#[derive(Debug, Clone, Args)]
pub struct FrameSinkArgs {
    /// Address to listen on.
    #[arg(long)]
    pub listen: SocketAddr,
    /// The trace (frame sizes).
    #[arg(long)]
    pub trace: PathBuf,
    /// Bound on the accept and on each read, seconds.
    #[arg(long, default_value_t = 600.0)]
    pub timeout_s: f64,
}

/// `tcpnc lab stream-source`.
#[derive(Debug, Clone, Args)]
pub struct FrameSourceArgs {
    /// Sink address.
    #[arg(long)]
    pub connect: SocketAddr,
    /// The trace (frame times and sizes).
    #[arg(long)]
    pub trace: PathBuf,
    /// Congestion control.
    #[arg(long, value_enum)]
    pub cc: CongestionControl,
    /// Seed of the frames' contents.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Bound on the connect and on each write or read, seconds.
    #[arg(long, default_value_t = 600.0)]
    pub timeout_s: f64,
}

/// The trace: the file, or the synthetic model for `seed`.
pub fn load_trace(
    file: Option<&PathBuf>,
    spec: &StreamSpec,
    duration_s: f64,
    seed: u64,
) -> Result<Trace> {
    match file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading trace {}", path.display()))?;
            Trace::parse(&text).with_context(|| format!("trace {}", path.display()))
        }
        None => Ok(spec.model(duration_s).generate(seed)?),
    }
}

/// Runs `tcpnc lab stream`.
pub fn run(a: StreamArgs, gw: LabGateways) -> Result<()> {
    ensure!(!a.cases.is_empty(), "--cases names no case");
    if a.coding.policies.window_policy.is_some() {
        bail!("the nc cases set the window policy; choose them with --cases nc-fixed,nc-vbnc");
    }
    ensure!(
        a.timeout_s.is_finite() && a.timeout_s > 0.0,
        "--timeout-s must be > 0"
    );
    let deadline = a
        .stream
        .deadline()
        .context("--deadline-ms must be a non-negative number")?;
    let trace = load_trace(a.trace.as_ref(), &a.stream, LAB_DURATION_S, a.seed)?;
    let path = a.path.settings();
    path.validate()?;
    let coding = a.coding.resolved(path.spec.loss);
    guard::require_root()?;
    let lab = new_lab(gw)?;
    let settings = StreamSettings {
        nc_cc: a.nc_cc,
        data_seed: a.seed,
        deadline,
        timeout_s: a.timeout_s,
    };
    let load_before = load_average();
    let results = run_cases(&lab, &a, &trace, &path, &coding, &settings)?;
    let extra = json!({
        "path_seed": path.seed,
        "load_average_before": load_before,
        "load_average_after": load_average(),
        "trace_file": a.trace,
        "seed": a.seed,
    });
    let spec = json!(a.stream.resolved(LAB_DURATION_S));
    if let Some(file) = &a.series {
        let csv: String = results
            .iter()
            .enumerate()
            .map(|(i, r)| series_csv(r.case.as_str(), &r.records, i == 0))
            .collect();
        std::fs::write(file, csv).with_context(|| format!("writing {}", file.display()))?;
    }
    let plots = write_plots(a.plot.as_ref(), &results, &trace, &path)?;
    if a.json {
        let v = stream::stream_json(&trace, spec, &results, extra);
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print_text(&trace, &path, &extra, &results);
        for p in plots {
            println!("wrote {}", p.display());
        }
    }
    if let Some(r) = results.iter().find(|r| !r.integrity_ok) {
        bail!(
            "integrity check failed in case {} (a frame's sha256 differs or is missing)",
            r.case
        );
    }
    Ok(())
}

fn run_cases(
    lab: &Lab,
    a: &StreamArgs,
    trace: &Trace,
    path: &tcpnc_lab::PathSettings,
    coding: &tcpnc_lab::PolicyOverrides,
    s: &StreamSettings,
) -> Result<Vec<CaseResult>> {
    let file = lab.file("trace", "csv");
    std::fs::write(&file, trace.to_text())
        .with_context(|| format!("writing {}", file.display()))?;
    let mut out = Vec::new();
    for &case in &a.cases {
        if !a.json {
            eprintln!("running {} ...", case.name());
        }
        let r = stream::run_case(lab, case, path, coding, (trace, &file), s)
            .with_context(|| format!("case {}", case.name()))?;
        out.push(r);
    }
    Ok(out)
}

fn write_plots(
    dir: Option<&PathBuf>,
    results: &[CaseResult],
    trace: &Trace,
    path: &tcpnc_lab::PathSettings,
) -> Result<Vec<PathBuf>> {
    let Some(dir) = dir else {
        return Ok(Vec::new());
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let title = format!(
        "lab: {:.1} Mbit/s stream, {} Mbit/s, {} ms, loss {}",
        trace.mean_bit_rate() / 1e6,
        path.spec.rate_mbit,
        path.spec.delay_ms,
        path.spec.loss
    );
    let cases: Vec<(&str, &[tcpnc_stream::FrameRecord])> = results
        .iter()
        .map(|r| (r.case.as_str(), &r.records[..]))
        .collect();
    Ok(tcpnc_experiment::stream_plot::write_stream_plots(
        &cases, dir, &title,
    )?)
}

fn print_text(
    trace: &Trace,
    path: &tcpnc_lab::PathSettings,
    extra: &serde_json::Value,
    results: &[CaseResult],
) {
    let p = &path.spec;
    println!(
        "{} frames, {:.3} Mbit/s mean over {:.1} s; path {} Mbit/s, {} ms one way, loss {} (burst {}), seed {}; load average {} -> {}",
        trace.frames.len(),
        trace.mean_bit_rate() / 1e6,
        trace.duration().as_secs_f64(),
        p.rate_mbit,
        p.delay_ms,
        p.loss,
        p.burst,
        path.seed,
        extra["load_average_before"],
        extra["load_average_after"],
    );
    println!("{}", stream::stream_table(results));
    println!(
        "(latency and jitter in ms; late ms: the largest delay of a frame's write behind its schedule)"
    );
}
