//! Backends run one point once: [`Backend`], its [`RunRecord`], and the simulator backend.

use std::time::{Duration, Instant};

use tcpnc_proto::EngineConfig;
use tcpnc_sim::nc_box::{NcBox, OUTER_HEADER_LEN};
use tcpnc_sim::tcpnc_link::{LossModel, QueueLimit};
use tcpnc_sim::{SimConfig, SimOutcome};

use crate::error::{ExperimentError, Result};
use crate::params::{CongestionControl as Cc, Params, PathMode};

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
}

/// Something that runs points.
pub trait Backend {
    /// `sim` or `lab`.
    fn name(&self) -> &'static str;
    /// Whether this backend can run `p` (checked for every point before the first run).
    fn check(&self, p: &Params) -> std::result::Result<(), String>;
    /// Runs `p` once with `seed`. A failed transfer is a record (`counted = false`); an
    /// error stops the experiment.
    fn run(&mut self, p: &Params, seed: u64) -> Result<RunRecord>;
}

/// The deterministic simulator ([`tcpnc_sim`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct SimBackend;

/// The simulator configuration of a point.
pub fn sim_config(p: &Params, seed: u64) -> Result<SimConfig> {
    let (bytes, limit) = match p.duration_s {
        // A session: more bytes than the link can carry, cut at `duration_s`.
        Some(d) => (
            ((p.rate_mbit * 1e6 / 8.0 * d * 1.2) as u64).max(1),
            Duration::from_secs_f64(d),
        ),
        None => (p.bytes, Duration::from_secs_f64(p.timeout_s)),
    };
    let mut cfg = SimConfig::new()
        .with_bytes(bytes)
        .with_seed(seed)
        .with_cc(p.cc)
        .with_rate_bps((p.rate_mbit * 1e6).round() as u64)
        .with_delay(Duration::from_secs_f64(p.delay_ms / 1e3))
        .with_forward_loss(LossModel::from_mean(p.loss, p.burst).map_err(|e| {
            ExperimentError::Backend {
                backend: "sim".into(),
                detail: e.to_string(),
            }
        })?)
        .with_reverse_loss(LossModel::bernoulli(p.reverse_loss))
        .with_loss_position(p.loss_position)
        .with_queue(QueueLimit::Packets(p.queue_packets))
        .with_max_sim_time(limit);
    cfg.mtu = p.mtu;
    cfg.rx_buffer = p.buffer_kib.saturating_mul(1024);
    cfg.tx_buffer = cfg.rx_buffer;
    cfg.ack_delay = (p.ack_delay_ms > 0).then(|| Duration::from_millis(p.ack_delay_ms));
    let jitter = Duration::from_secs_f64(p.jitter_ms / 1e3);
    cfg.forward = cfg.forward.with_jitter(jitter, p.reorder);
    cfg.reverse = cfg.reverse.with_jitter(jitter, p.reorder);
    Ok(cfg)
}

/// The TCP/NC engine configuration of a point (both sides).
pub fn engine_config(p: &Params) -> EngineConfig {
    let mut e = EngineConfig::new(&p.policies(), p.mtu.saturating_sub(OUTER_HEADER_LEN));
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
        if p.cc == Cc::Bbr {
            return Err("cc = bbr needs the lab backend (smoltcp has no BBR)".into());
        }
        sim_config(p, 1)
            .map_err(|e| e.to_string())?
            .validate()
            .map_err(|e| e.to_string())?;
        if p.mode == PathMode::Nc {
            NcBox::new(engine_config(p), 1).map_err(|e| format!("engine: {e}"))?;
        }
        Ok(())
    }

    fn run(&mut self, p: &Params, seed: u64) -> Result<RunRecord> {
        let cfg = sim_config(p, seed)?;
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
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan keys of real links reach the simulated path.
    #[test]
    fn bursts_and_jitter_reach_the_sim() {
        let p = Params {
            loss: 0.05,
            burst: 4.0,
            jitter_ms: 3.0,
            reorder: true,
            ..Params::default()
        };
        let cfg = sim_config(&p, 1).unwrap();
        assert!(matches!(
            cfg.forward.loss,
            tcpnc_sim::tcpnc_link::LossModel::GilbertElliott { .. }
        ));
        assert!(cfg.forward.jitter.allow_reordering);
        assert_eq!(cfg.reverse.jitter.max, Duration::from_millis(3));
        assert!(SimBackend.check(&p).is_ok());
    }
}
