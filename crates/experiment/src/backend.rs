//! Backends run one point once: [`Backend`], its [`RunRecord`], and the simulator backend.

use std::time::Instant;

use tcpnc_proto::EngineConfig;
use tcpnc_sim::nc_box::NcBox;
use tcpnc_sim::run_spec::RunSpec;
use tcpnc_sim::stream_run::run_scheme;
use tcpnc_sim::{SimConfig, SimOutcome};
use tcpnc_stream::{FrameRecord, SIM_DURATION_S, StreamSummary};

use crate::error::{ExperimentError, Result};
use crate::params::{CongestionControl as Cc, Params, PathMode};
use crate::plan_stream_plot::scheme;

/// What one run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    /// `completed`, `time_limit`, `stalled`, `error: ...`, ...
    pub outcome: String,
    /// Whether the run counts in the summary: a complete fixed-size transfer with integrity,
    /// or a timed session that reached its end.
    pub counted: bool,
    /// Application goodput in Mbit/s (10⁶ bit/s).
    pub goodput_mbit: f64,
    /// Seconds from connect to the last byte read (or the session length).
    pub completion_s: f64,
    /// Bytes the receiving application read.
    pub bytes_delivered: u64,
    /// Byte count and sha256 equal at both ends (false for a session cut at its end).
    pub integrity_ok: bool,
    /// TCP retransmissions by the sender.
    pub retransmissions: u64,
    /// Wall-clock seconds the run took.
    pub wall_s: f64,
    /// Jain's fairness index of the flows' goodputs (lab runs with `flows > 1`).
    pub jain_index: Option<f64>,
    /// Duplicate ACKs the sending TCP received (sim; Mitsuzumi et al.'s measure).
    pub dup_acks: Option<u64>,
    /// Fast retransmits of the sending TCP (sim: seen on its egress; lab: the kernel's
    /// `TCPFastRetrans`; Mitsuzumi et al. Figs. 8, 11).
    pub fast_retransmits: Option<u64>,
    /// The sending TCP's flight size averaged over time, bytes (sim; what is seen of cwnd).
    pub flight_mean_bytes: Option<f64>,
    /// Decoded packets per second over 0.1 s intervals: mean and standard deviation (sim;
    /// Karafillis et al. §III).
    pub decoding_mean_pps: Option<f64>,
    /// See `decoding_mean_pps`.
    pub decoding_sd_pps: Option<f64>,
    /// The run's time series as CSV, columns named by `tcpnc_settings::SeriesColumn` (sim:
    /// `tcpnc sim --series`'s; the runner keeps it when the plan's `[plot] series_y` asks).
    pub series_csv: Option<String>,
    /// A stream point's frame latency, jitter and stalls (`tcpnc_stream::metrics`).
    pub stream: Option<StreamSummary>,
    /// A stream point's every frame, when the runner keeps them for the stream figures.
    pub frames: Option<Vec<FrameRecord>>,
}

impl RunRecord {
    /// A run that measured nothing: `outcome` says why (not counted).
    pub fn failed(outcome: String, wall_s: f64) -> RunRecord {
        RunRecord {
            outcome,
            counted: false,
            goodput_mbit: f64::NAN,
            completion_s: f64::NAN,
            bytes_delivered: 0,
            integrity_ok: false,
            retransmissions: 0,
            wall_s,
            jain_index: None,
            dup_acks: None,
            fast_retransmits: None,
            flight_mean_bytes: None,
            decoding_mean_pps: None,
            decoding_sd_pps: None,
            series_csv: None,
            stream: None,
            frames: None,
        }
    }

    /// A stream run's record: it counts when it ran to its end or its time limit with every
    /// delivered frame intact (undelivered frames are stalls); its goodput is the stream's.
    pub fn stream(
        outcome: &str,
        ended: bool,
        summary: StreamSummary,
        frames: &[FrameRecord],
        keep: bool,
    ) -> RunRecord {
        RunRecord {
            counted: ended && frames.iter().all(|f| f.arrived_s.is_none() || f.intact),
            goodput_mbit: summary.goodput_mbit,
            integrity_ok: summary.intact == summary.frames,
            stream: Some(summary),
            frames: keep.then(|| frames.to_vec()),
            ..RunRecord::failed(outcome.to_string(), 0.0)
        }
    }
}

/// Something that runs points.
pub trait Backend {
    /// `sim` or `lab`.
    fn name(&self) -> &'static str;
    /// Whether this backend can run `p` (checked for every point before the first run).
    fn check(&self, p: &Params) -> std::result::Result<(), String>;
    /// Runs `p` once with `seed`, keeping in the record what the figures need when `keep`: a
    /// bulk run's time series (if the backend records one), a stream run's every frame. A
    /// failed transfer is a record (`counted = false`); an error stops the experiment.
    fn run(&mut self, p: &Params, seed: u64, keep: bool) -> Result<RunRecord>;
}

/// The deterministic simulator ([`tcpnc_sim`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct SimBackend;

/// The simulator run of a point with `seed`, as `tcpnc sim` would state it: a fixed-size
/// transfer bounded by `timeout_s`, or a session (more bytes than the link can carry, cut at
/// `duration_s`); a stream bounded by `timeout_s` (its bytes are its trace's).
pub fn run_spec(p: &Params, seed: u64) -> RunSpec {
    let (bytes, max_sim_s) = match p.duration_s {
        Some(d) if !p.is_stream() => (
            ((p.path().rate_mbit * 1e6 / 8.0 * d * 1.2) as u64).max(1),
            d,
        ),
        _ => (p.bytes, p.timeout_s),
    };
    RunSpec {
        mode: p.mode,
        profile: p.profile,
        cc: p.cc,
        path: p.path().into(),
        bytes,
        seed,
        mtu: p.mtu,
        buffer_kib: p.buffer_kib,
        send_buffer_kib: p.send_buffer_kib,
        ack_delay_ms: p.ack_delay_ms,
        max_sim_s,
        policies: p.coding,
    }
}

fn sim_error(e: impl std::fmt::Display) -> ExperimentError {
    ExperimentError::Backend {
        backend: "sim".into(),
        detail: e.to_string(),
    }
}

/// The simulator configuration of a point.
pub fn sim_config(p: &Params, seed: u64) -> Result<SimConfig> {
    run_spec(p, seed).sim_config().map_err(sim_error)
}

/// The TCP/NC engine configuration of a point (both sides), with the point's buffers.
pub fn engine_config(p: &Params) -> EngineConfig {
    let mut e = run_spec(p, 0).engine_config();
    e.limits.coding_buffer_packets = p.buffer_packets;
    e.limits.decoding_buffer_packets = p.buffer_packets;
    e
}

impl Backend for SimBackend {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn check(&self, p: &Params) -> std::result::Result<(), String> {
        if p.flows > 1 {
            return Err(
                "flows > 1 needs the lab backend (the simulator runs one connection)".into(),
            );
        }
        if p.warmup_bytes > 0 {
            return Err(
                "warmup_bytes needs the lab backend (each simulation is a fresh path)".into(),
            );
        }
        if p.cc == Cc::Bbr {
            return Err("cc = bbr needs the lab backend (smoltcp has no BBR)".into());
        }
        sim_config(p, 1).map_err(|e| e.to_string())?;
        if p.mode == PathMode::Nc {
            NcBox::new(engine_config(p), 1).map_err(|e| format!("engine: {e}"))?;
        }
        Ok(())
    }

    fn run(&mut self, p: &Params, seed: u64, keep: bool) -> Result<RunRecord> {
        if p.is_stream() {
            return run_stream_point(p, seed, keep);
        }
        let series = keep;
        let mut cfg = sim_config(p, seed)?;
        cfg.series_interval = Some(tcpnc_sim::series::SERIES_INTERVAL);
        let start = Instant::now();
        let fail = |detail: String| ExperimentError::Backend {
            backend: "sim".into(),
            detail,
        };
        let report = match p.mode {
            PathMode::Plain | PathMode::Direct => tcpnc_sim::run(&cfg),
            PathMode::Nc => {
                let engine = engine_config(p);
                let (mut client, mut server) =
                    NcBox::pair(engine, seed).map_err(|e| fail(e.to_string()))?;
                tcpnc_sim::run_with_boxes(&cfg, &mut client, &mut server)
            }
        }
        .map_err(|e| fail(e.to_string()))?;
        let decoding = report.series.as_ref().map(|s| s.decoding_mean_sd());
        let counted = match p.duration_s {
            Some(_) => {
                matches!(report.outcome, SimOutcome::TimeLimit)
                    || (report.outcome == SimOutcome::Completed && report.integrity_ok)
            }
            None => report.outcome == SimOutcome::Completed && report.integrity_ok,
        };
        Ok(RunRecord {
            outcome: report.outcome.as_str().to_string(),
            counted,
            goodput_mbit: report.goodput_mbit,
            completion_s: report.completion_s,
            bytes_delivered: report.bytes_delivered,
            integrity_ok: report.integrity_ok,
            retransmissions: report.tcp.retransmissions,
            wall_s: start.elapsed().as_secs_f64(),
            jain_index: None,
            dup_acks: Some(report.tcp.dup_acks_at_sender),
            fast_retransmits: Some(report.tcp.fast_retransmits),
            flight_mean_bytes: Some(report.flight_mean_bytes),
            decoding_mean_pps: decoding.map(|d| d.0),
            decoding_sd_pps: decoding.map(|d| d.1),
            series_csv: report
                .series
                .as_ref()
                .filter(|_| series)
                .map(|s| s.to_csv()),
            stream: None,
            frames: None,
        })
    }
}

/// A stream point on the simulator: its scheme (plain with its cc, or nc with its window
/// policy) through `tcpnc sim --workload stream`'s code ([`run_scheme`]), the trace for
/// `trace_seed` or `seed`, `tcpnc sim`'s 20 s unless `duration_s`.
fn run_stream_point(p: &Params, seed: u64, keep: bool) -> Result<RunRecord> {
    let trace = p.trace(seed, SIM_DURATION_S).map_err(sim_error)?;
    let deadline = p
        .stream_spec()
        .deadline()
        .ok_or_else(|| sim_error("deadline_ms must be >= 0"))?;
    let cfg = sim_config(p, seed)?;
    let engine = (p.mode == PathMode::Nc).then(|| engine_config(p));
    let start = Instant::now();
    let r = run_scheme(&cfg, &trace, deadline, scheme(p), engine).map_err(sim_error)?;
    let ended = matches!(
        r.report.outcome,
        SimOutcome::Completed | SimOutcome::TimeLimit
    );
    Ok(RunRecord {
        completion_s: r.report.completion_s,
        bytes_delivered: r.report.bytes_delivered,
        retransmissions: r.report.tcp.retransmissions,
        wall_s: start.elapsed().as_secs_f64(),
        dup_acks: Some(r.report.tcp.dup_acks_at_sender),
        fast_retransmits: Some(r.report.tcp.fast_retransmits),
        flight_mean_bytes: Some(r.report.flight_mean_bytes),
        ..RunRecord::stream(
            r.report.outcome.as_str(),
            ended,
            r.summary,
            &r.records,
            keep,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::PathOverrides;

    /// The plan keys of real links reach the simulated path.
    #[test]
    fn bursts_and_jitter_reach_the_sim() {
        let p = Params {
            path: PathOverrides {
                loss: Some(0.05),
                burst: Some(4.0),
                jitter_ms: Some(3.0),
                reorder: Some(true),
                ..PathOverrides::default()
            },
            ..Params::default()
        };
        let cfg = sim_config(&p, 1).unwrap();
        assert!(matches!(
            cfg.forward.loss,
            tcpnc_sim::tcpnc_link::LossModel::GilbertElliott { .. }
        ));
        assert!(cfg.forward.jitter.allow_reordering);
        assert_eq!(cfg.reverse.jitter.max, std::time::Duration::from_millis(3));
        assert!(SimBackend.check(&p).is_ok());
    }
}
