//! The settings of one run ([`Params`]): every key a plan may fix or sweep.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;
pub use tcpnc_proto::settings::{
    CongestionControl, LossPosition, PathMode, PathOverrides, PathSpec, Policies, PolicyOverrides,
    Profile, RedundancyPolicy, WindowPolicy,
};
pub use tcpnc_stream::{Preset, StreamSpec, Workload};
use tcpnc_stream::{SIM_DURATION_S, Trace, TraceError};

/// One run's settings. Defaults follow §VI of the implementation paper where they apply: its
/// path ([`PathSpec::paper_experiment`]: 6 Mbit/s, 15 ms, a 5-packet bottleneck queue with the
/// loss element before it), 100-packet encoder and decoder buffers, reno, W = 3, R from the
/// loss rate ([`Params::policies`]).
/// Unknown keys are rejected by the plan parser (it checks every key against [`keys`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// `plain` or `nc`.
    pub mode: PathMode,
    /// `reno`, `cubic`, `bbr` (lab) or `none` (sim).
    pub cc: CongestionControl,
    /// The path keys (rate_mbit, delay_ms, loss, burst, reverse_loss, jitter_ms, reorder,
    /// queue_packets, loss_position); absent keys take the paper's testbed's value
    /// ([`Params::path`]).
    #[serde(flatten)]
    pub path: PathOverrides,
    /// The base policy set (nc): `experiment` (default: the paper's W = 3, R from the loss
    /// rate), `simulator` or `default` (the product's, as `tcpnc up` runs).
    pub profile: Profile,
    /// The coding policies (nc): window, redundancy, scheme, coefficients, repair, ack_rule;
    /// absent keys take the profile's value.
    #[serde(flatten)]
    pub coding: PolicyOverrides,
    /// Encoder and decoder buffer in packets (nc, sim).
    pub buffer_packets: usize,
    /// Bytes per transfer (when `duration_s` is absent); per flow with `flows`.
    pub bytes: u64,
    /// Parallel TCP connections (lab); goodput is their aggregate.
    pub flows: usize,
    /// Bytes of one unmeasured transfer through the same gateways before each measured one
    /// (lab; `tcpnc lab run --warmup-bytes`); 0: none.
    pub warmup_bytes: u64,
    /// Session length in seconds (sim): send for this long, goodput = bytes read / duration.
    /// A stream's length (default: `tcpnc sim`'s 20 s on the simulator, `tcpnc lab stream`'s
    /// 60 s on the lab).
    pub duration_s: Option<f64>,
    /// TCP socket send and receive buffers, KiB (sim).
    pub buffer_kib: usize,
    /// The sending TCP's send buffer alone, KiB (sim; default `buffer_kib`): bounds its flight
    /// without bounding what the receiving side holds, as ns-2's `window_` (Karafillis et al.
    /// §II's "receive window of 100 packets"); `tcpnc sim --send-buffer-kib`.
    pub send_buffer_kib: Option<usize>,
    /// Delayed-ACK timeout of the receiving TCP, ms, 0 = none (sim).
    pub ack_delay_ms: u64,
    /// IP MTU of the TCP endpoints (sim).
    pub mtu: usize,
    /// Bound on one run: virtual seconds (sim, fixed-size transfers) or wall seconds (lab).
    pub timeout_s: f64,
    /// The name of the curve this point belongs to (e.g. a `[[variant]]`'s protocol name):
    /// plots and summaries name the series by it instead of the keys it stands for.
    pub series: Option<String>,
    /// `bulk` (a transfer of `bytes`, or a `duration_s` session) or `stream` (a frame trace
    /// written at its times: one scheme per point, plain with `cc` or nc with its
    /// `window_policy`; `tcpnc sim --workload stream`, `tcpnc lab stream`).
    pub workload: Workload,
    /// Stream: the synthetic trace's model (default: [`StreamSpec`]'s, `target`).
    pub preset: Option<Preset>,
    /// Stream: mean bit rate of the trace, Mbit/s (default: the preset's).
    pub stream_mbit: Option<f64>,
    /// Stream: frames per second (default: the preset's).
    pub fps: Option<f64>,
    /// Stream: playout deadline, ms; a later frame is a stall (default: [`StreamSpec`]'s).
    pub deadline_ms: Option<f64>,
    /// Stream: seed of the synthetic trace (default: the run's seed, as `tcpnc sim --seed`
    /// seeds both); fixed, every repetition streams the same frames over other losses.
    pub trace_seed: Option<u64>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            mode: PathMode::Nc,
            cc: CongestionControl::Reno,
            path: PathOverrides::default(),
            profile: Profile::Experiment,
            coding: PolicyOverrides::default(),
            buffer_packets: 100,
            bytes: 2_000_000,
            flows: 1,
            warmup_bytes: 0,
            duration_s: None,
            buffer_kib: 64,
            send_buffer_kib: None,
            ack_delay_ms: 10,
            mtu: 1500,
            timeout_s: 600.0,
            series: None,
            workload: Workload::Bulk,
            preset: None,
            stream_mbit: None,
            fps: None,
            deadline_ms: None,
            trace_seed: None,
        }
    }
}

/// The keys that only a stream point may give (and [`keys`]' last).
pub const STREAM_KEYS: [&str; 5] = ["preset", "stream_mbit", "fps", "deadline_ms", "trace_seed"];

/// The keys of [`Params`] after the policy keys, in CSV column order.
const RUN_KEYS: [&str; 11] = [
    "buffer_packets",
    "bytes",
    "flows",
    "warmup_bytes",
    "duration_s",
    "buffer_kib",
    "send_buffer_kib",
    "ack_delay_ms",
    "mtu",
    "timeout_s",
    "series",
];

/// Every key of [`Params`] in CSV column order: the path and policy keys come from the shared
/// vocabulary ([`PathSpec::KEYS`], [`PolicyOverrides::KEYS`]), so a new path setting or policy
/// is a plan key and a CSV column.
pub fn keys() -> &'static [&'static str] {
    static KEYS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
        ["mode", "cc"]
            .into_iter()
            .chain(PathSpec::KEYS)
            .chain(["profile"])
            .chain(PolicyOverrides::KEYS)
            .chain(RUN_KEYS)
            .chain(["workload"])
            .chain(STREAM_KEYS)
            .collect()
    });
    &KEYS
}

impl Params {
    /// The path: the paper's testbed with the keys the plan gives.
    pub fn path(&self) -> PathSpec {
        PathSpec::paper_experiment().with(&self.path)
    }

    /// The policy set the engines run with: the profile's set for this loss rate with the
    /// keys the plan gives.
    pub fn policies(&self) -> Policies {
        self.profile.policies(self.path().loss).with(&self.coding)
    }

    /// Range checks shared by every backend.
    pub fn validate(&self) -> Result<(), String> {
        self.path().validate().map_err(|e| e.to_string())?;
        let positive = |v: f64, k: &str| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("{k} = {v} must be > 0"))
            }
        };
        positive(self.timeout_s, "timeout_s")?;
        if let Some(d) = self.duration_s {
            positive(d, "duration_s")?;
        }
        if self.mode == PathMode::Direct {
            return Err("mode = direct: plans compare plain and nc".into());
        }
        self.policies().validate().map_err(|e| e.to_string())?;
        if self.buffer_packets == 0 || self.buffer_kib == 0 || self.send_buffer_kib == Some(0) {
            return Err("buffer_packets, buffer_kib and send_buffer_kib must be > 0".into());
        }
        if self.bytes == 0 {
            return Err("bytes must be > 0".into());
        }
        if !(1..=tcpnc_lab::settings::MAX_FLOWS).contains(&self.flows) {
            return Err(format!(
                "flows = {} must be in 1..={}",
                self.flows,
                tcpnc_lab::settings::MAX_FLOWS
            ));
        }
        self.validate_workload()
    }

    /// A bulk point gives no stream key; a stream point is one connection with a valid trace
    /// model and deadline.
    fn validate_workload(&self) -> Result<(), String> {
        let given = [
            self.preset.is_some(),
            self.stream_mbit.is_some(),
            self.fps.is_some(),
            self.deadline_ms.is_some(),
            self.trace_seed.is_some(),
        ];
        let given: Vec<&str> = STREAM_KEYS
            .iter()
            .zip(given)
            .filter_map(|(k, g)| g.then_some(*k))
            .collect();
        if !self.is_stream() {
            if given.is_empty() {
                return Ok(());
            }
            return Err(format!(
                "stream keys on a bulk point ({}): set workload = \"stream\"",
                given.join(", ")
            ));
        }
        if self.flows != 1 || self.warmup_bytes != 0 {
            return Err(
                "workload = \"stream\" is one connection: flows = 1, no warmup_bytes".into(),
            );
        }
        let spec = self.stream_spec();
        if spec.deadline().is_none() {
            return Err(format!("deadline_ms = {} must be >= 0", spec.deadline_ms));
        }
        spec.model(SIM_DURATION_S)
            .validate()
            .map_err(|e| format!("the stream (preset, stream_mbit, fps, duration_s): {e}"))
    }

    /// Whether this point streams frames (`workload = "stream"`).
    pub fn is_stream(&self) -> bool {
        self.workload == Workload::Stream
    }

    /// The stream's flags as `tcpnc sim --workload stream` and `tcpnc lab stream` take them:
    /// the keys given, [`StreamSpec`]'s defaults for the others.
    pub fn stream_spec(&self) -> StreamSpec {
        let d = StreamSpec::default();
        StreamSpec {
            preset: self.preset.unwrap_or(d.preset),
            duration_s: self.duration_s,
            stream_mbit: self.stream_mbit,
            fps: self.fps,
            deadline_ms: self.deadline_ms.unwrap_or(d.deadline_ms),
        }
    }

    /// The stream's synthetic trace in a run with `seed` (its seed unless `trace_seed`), for
    /// `default_duration_s` unless `duration_s` gives the length.
    pub fn trace(&self, seed: u64, default_duration_s: f64) -> Result<Trace, TraceError> {
        self.stream_spec()
            .model(default_duration_s)
            .generate(self.trace_seed.unwrap_or(seed))
    }

    /// Every key's value as JSON; the path and policy keys hold what the run used
    /// ([`Params::path`], [`Params::policies`]), given or not, and so do a stream point's
    /// `preset` and `deadline_ms` (its `bytes` are its trace's: none given).
    pub fn values(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Some(o) = v.as_object_mut() {
            for part in [to_json(&self.path()), to_json(&self.policies())] {
                if let Value::Object(p) = part {
                    o.extend(p);
                }
            }
            if self.is_stream() {
                let s = self.stream_spec();
                o.insert("preset".into(), to_json(&s.preset));
                o.insert("deadline_ms".into(), to_json(&s.deadline_ms));
                o.insert("bytes".into(), Value::Null);
            }
        }
        v
    }

    /// The value of every key as written in the CSV (in [`keys`] order; absent = empty).
    pub fn cells(&self) -> Vec<String> {
        let v = self.values();
        keys().iter().map(|k| cell(&v[*k])).collect()
    }
}

fn to_json(p: &impl Serialize) -> Value {
    serde_json::to_value(p).unwrap_or(Value::Null)
}

/// A JSON scalar as a CSV cell: strings bare, null empty, numbers in Rust's shortest form.
pub fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_follow_keys_and_defaults_validate() {
        let p = Params::default();
        assert!(p.validate().is_ok());
        let c = p.cells();
        assert_eq!(c.len(), keys().len());
        assert_eq!(c[0], "nc");
        assert_eq!(c[2], "6.0", "rate_mbit of the paper's testbed");
        let at = |k: &str| keys().iter().position(|x| *x == k).unwrap();
        assert_eq!(c[at("redundancy")], "1.0");
        assert_eq!(c[at("window")], "3");
        assert_eq!(c[at("ack_rule")], "mitsuzumi");
        assert_eq!(c[at("loss_position")], "before_queue");
        assert_eq!(c[at("queue_packets")], "5");
        let lossy = Params {
            path: PathOverrides {
                loss: Some(1.5),
                ..PathOverrides::default()
            },
            ..Params::default()
        };
        assert!(lossy.validate().unwrap_err().contains("loss"));
        let bad = Params {
            coding: PolicyOverrides {
                window: Some(0),
                ..PolicyOverrides::default()
            },
            ..Params::default()
        };
        assert!(bad.validate().unwrap_err().contains("window"));
    }
}
