//! [`RunSpec`]: one simulated transfer as a user states it (`tcpnc sim`'s flags, feature
//! `clap`): the path, the TCP, the transfer and the coding policies; how it becomes a
//! [`SimConfig`] and engines, and how its result is reported (JSON and a summary).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tcpnc_link::{LinkError, LinkStats, LossModel, QueueLimit};
use tcpnc_proto::settings::{
    CongestionControl, PathMode, PathOverrides, PathSpec, Policies, PolicyOverrides, Profile,
};
use tcpnc_proto::{ConfigError, EngineConfig};

use crate::config::{SimConfig, SimError};
use crate::nc_box::{NcBox, OUTER_HEADER_LEN};
use crate::report::SimReport;

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunSpecError {
    /// A value out of range (the flag and why).
    #[error("{0}")]
    Invalid(String),
    /// The loss model refused `--loss` / `--burst`.
    #[error("--loss, --burst: {0}")]
    Loss(#[from] LinkError),
    /// The simulator refused the configuration.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// The engines refused their configuration.
    #[error("invalid engine configuration: {0}")]
    Engine(#[from] ConfigError),
}

/// One simulated bulk transfer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct RunSpec {
    /// Path mode (plain or nc; direct is a lab mode).
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value_t = PathMode::Plain))]
    #[serde(skip)]
    pub mode: PathMode,
    /// Base policy set (nc mode): simulator = W 16, R = 1/(1 − loss) + 0.03 + 0.3·loss (1
    /// without loss), dense, seeded, deficit repair, Mitsuzumi's ACK rule; default = the
    /// product's (tcpnc up: W 12, R auto); experiment = the paper's W 3 with the simulator's R.
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value_t = Profile::Simulator))]
    pub profile: Profile,
    /// Congestion control of both endpoints (smoltcp: reno, cubic or none).
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value_t = CongestionControl::Reno))]
    pub cc: CongestionControl,
    /// The path (each flag replaces the value of the simulator's path,
    /// [`PathSpec::simulator`]).
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(skip)]
    pub path: PathOverrides,
    /// Bytes to transfer (`10MB`, `512k`, `1MiB` or a plain number).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value = "10MB", value_parser = tcpnc_settings::parse_bytes)
    )]
    pub bytes: u64,
    /// Master seed.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1))]
    pub seed: u64,
    /// IP MTU of the TCP endpoints.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1500))]
    pub mtu: usize,
    /// Socket send and receive buffer size, KiB.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1024))]
    pub buffer_kib: usize,
    /// Send buffer of the sending TCP alone, KiB, replacing `--buffer-kib` there: it bounds the
    /// sender's flight (bytes sent and not acknowledged) without bounding what the receiving
    /// side holds, as ns-2's TCP `window_` does for Karafillis et al.'s "receive window of 100
    /// packets" (§II), where undecoded data never closes the window.
    #[cfg_attr(feature = "clap", arg(long))]
    pub send_buffer_kib: Option<usize>,
    /// Delayed-ACK timeout, ms (0 = ACK immediately).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 10))]
    pub ack_delay_ms: u64,
    /// Virtual time limit, s.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 600.0))]
    pub max_sim_s: f64,
    /// Coding policies (nc mode); each replaces the profile's value.
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(skip)]
    pub policies: PolicyOverrides,
}

fn secs(s: f64, name: &str) -> Result<Duration, RunSpecError> {
    Duration::try_from_secs_f64(s)
        .map_err(|_| RunSpecError::Invalid(format!("{name} must be a non-negative number")))
}

impl RunSpec {
    /// The path: the simulator's, keys replaced.
    pub fn path(&self) -> PathSpec {
        PathSpec::simulator().with(&self.path)
    }

    /// The policy set of the engines: the profile's for the path's loss, keys replaced.
    pub fn policies(&self) -> Policies {
        self.profile.policies(self.path().loss).with(&self.policies)
    }

    /// The TCP/NC engine configuration (both sides).
    pub fn engine_config(&self) -> EngineConfig {
        self.engine_config_with(&self.policies())
    }

    /// The engine configuration of this run's tunnel with another policy set (the stream
    /// workload's schemes).
    pub fn engine_config_with(&self, policies: &Policies) -> EngineConfig {
        EngineConfig::new(policies, self.mtu.saturating_sub(OUTER_HEADER_LEN))
    }

    /// The simulator configuration.
    pub fn sim_config(&self) -> Result<SimConfig, RunSpecError> {
        let path = self.path();
        path.validate()
            .map_err(|e| RunSpecError::Invalid(e.to_string()))?;
        let mut cfg = SimConfig::new()
            .with_bytes(self.bytes)
            .with_seed(self.seed)
            .with_cc(self.cc)
            .with_rate_bps((path.rate_mbit * 1e6).round() as u64)
            .with_delay(secs(path.delay_ms / 1e3, "--delay-ms")?)
            .with_forward_loss(LossModel::from_mean(path.loss, path.burst)?)
            .with_reverse_loss(LossModel::bernoulli(path.reverse_loss))
            .with_loss_position(path.loss_position)
            .with_queue(QueueLimit::Packets(path.queue()))
            .with_max_sim_time(secs(self.max_sim_s, "--max-sim-s")?);
        let jitter = secs(path.jitter_ms / 1e3, "--jitter-ms")?;
        cfg.forward = cfg.forward.with_jitter(jitter, path.reorder);
        cfg.reverse = cfg.reverse.with_jitter(jitter, path.reorder);
        if path.delay_switch_ms > 0.0 {
            let every = secs(path.delay_switch_ms / 1e3, "--delay-switch-ms")?;
            let sd = secs(path.delay_sd_ms / 1e3, "--delay-sd-ms")?;
            cfg.forward = cfg.forward.with_delay_switch(every, sd);
            cfg.reverse = cfg.reverse.with_delay_switch(every, sd);
        }
        cfg.mtu = self.mtu;
        cfg.rx_buffer = self.buffer_kib.saturating_mul(1024);
        cfg.tx_buffer = self
            .send_buffer_kib
            .map_or(cfg.rx_buffer, |k| k.saturating_mul(1024));
        cfg.ack_delay = (self.ack_delay_ms > 0).then(|| Duration::from_millis(self.ack_delay_ms));
        cfg.validate()?;
        Ok(cfg)
    }

    /// Runs the transfer.
    pub fn run(&self) -> Result<SimReport, RunSpecError> {
        self.run_with_series(None)
    }

    /// Runs the transfer, recording a time series every `series` (`tcpnc sim --series`).
    pub fn run_with_series(&self, series: Option<Duration>) -> Result<SimReport, RunSpecError> {
        let mut cfg = self.sim_config()?;
        cfg.series_interval = series;
        Ok(match self.mode {
            PathMode::Plain => crate::run(&cfg)?,
            PathMode::Direct => {
                return Err(RunSpecError::Invalid(
                    "--mode direct is a lab mode (tcpnc lab); the simulator runs plain or nc"
                        .into(),
                ));
            }
            PathMode::Nc => {
                let (mut client, mut server) = NcBox::pair(self.engine_config(), self.seed)?;
                crate::run_with_boxes(&cfg, &mut client, &mut server)?
            }
        })
    }

    /// The result as one JSON object: the report, the mode, the flat counters named by the
    /// implementation issue, the wall time and `config` (this spec, the whole path and the whole
    /// policy set).
    pub fn result_json(&self, r: &SimReport, wall_s: f64) -> Value {
        let mut v = report_json(r);
        v["mode"] = json!(self.mode);
        if let Some(series) = &r.series {
            let (mean, sd) = series.decoding_mean_sd();
            v["decoding"] = json!({
                "mean_pps": mean,
                "sd_pps": sd,
                "interval_s": series.interval().as_secs_f64(),
            });
        }
        let get = |m: &BTreeMap<String, u64>, k: &str| m.get(k).copied();
        v["coded_sent"] = json!(get(&r.client_box, "data_sent"));
        v["redundant_sent"] = json!(get(&r.client_box, "redundant_sent"));
        v["innovative_received"] = json!(get(&r.server_box, "innovative_received"));
        v["nc_acks"] = json!(get(&r.server_box, "acks_sent"));
        v["tcp_retransmissions"] = json!(r.tcp.retransmissions);
        v["wall_s"] = json!(wall_s);
        let mut config = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Some(c) = config.as_object_mut() {
            for part in [json!(self.path()), json!(self.policies())] {
                if let Value::Object(p) = part {
                    c.extend(p);
                }
            }
            // The queue actually used (the path may leave it to one BDP).
            c.insert("queue_packets".into(), json!(self.path().queue()));
        }
        v["config"] = config;
        v
    }
}

/// The report as a JSON object (everything but the run's configuration and wall time).
pub fn report_json(r: &SimReport) -> Value {
    json!({
        "outcome": r.outcome.as_str(),
        "goodput_mbit": r.goodput_mbit,
        "completion_s": r.completion_s,
        "integrity_ok": r.integrity_ok,
        "bytes_requested": r.bytes_requested,
        "bytes_written": r.bytes_written,
        "bytes_delivered": r.bytes_delivered,
        "sha256_sent": hex(&r.sha256_sent),
        "sha256_received": hex(&r.sha256_received),
        "tcp": {
            "data_segments": r.tcp.data_segments,
            "retransmissions": r.tcp.retransmissions,
            "retransmitted_bytes": r.tcp.retransmitted_bytes,
            "acks": r.tcp.acks,
            "dup_acks": r.tcp.dup_acks,
            "dup_acks_at_sender": r.tcp.dup_acks_at_sender,
            "fast_retransmits": r.tcp.fast_retransmits,
            "dup_ack_runs_at_sender": r.tcp.dup_ack_runs_at_sender,
            "flight_mean_bytes": r.flight_mean_bytes,
        },
        "forward": link_json(&r.forward),
        "reverse": link_json(&r.reverse),
        "client_box": r.client_box,
        "server_box": r.server_box,
        "steps": r.steps,
    })
}

fn link_json(s: &LinkStats) -> Value {
    json!({
        "sent": s.sent,
        "sent_bytes": s.sent_bytes,
        "delivered": s.delivered,
        "delivered_bytes": s.delivered_bytes,
        "dropped_loss": s.dropped_loss,
        "dropped_queue": s.dropped_queue,
        "duplicated": s.duplicated,
        "corrupted": s.corrupted,
        "max_queue_packets": s.max_queue_packets,
        "max_queue_bytes": s.max_queue_bytes,
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The report as a few lines for a terminal.
pub fn summary(r: &SimReport, wall_s: f64) -> String {
    let mut s = format!(
        "outcome {}  integrity {}\n\
         goodput {:.3} Mbit/s  completion {:.3} s (virtual)  wall {:.3} s\n\
         bytes {}/{} delivered  tcp: {} data segments, {} retransmissions, {} dup ACKs",
        r.outcome.as_str(),
        if r.integrity_ok { "ok" } else { "FAILED" },
        r.goodput_mbit,
        r.completion_s,
        wall_s,
        r.bytes_delivered,
        r.bytes_requested,
        r.tcp.data_segments,
        r.tcp.retransmissions,
        r.tcp.dup_acks
    );
    for (name, l) in [("forward", &r.forward), ("reverse", &r.reverse)] {
        s += &format!(
            "\n{name}: sent {} delivered {} lost {} queue-dropped {} max-queue {} pkts",
            l.sent, l.delivered, l.dropped_loss, l.dropped_queue, l.max_queue_packets
        );
    }
    s
}
