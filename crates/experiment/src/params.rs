//! The settings of one run ([`Params`]): every key a plan may fix or sweep.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What runs beside each TCP endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Packets cross the path uncoded (the baseline TCP).
    Plain,
    /// TCP/NC: coding layer on both sides of the lossy path.
    Nc,
}

/// TCP congestion control of the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cc {
    /// Reno (no SACK in the simulator; smoltcp has none).
    Reno,
    /// CUBIC.
    Cubic,
    /// BBR (lab only: the kernel's).
    Bbr,
    /// No congestion control (simulator only).
    None,
}

/// Where the loss element sits relative to the bottleneck queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossPosition {
    /// Lost packets are dropped before the queue and take no queue space (the paper's setup).
    BeforeQueue,
    /// Packets are lost after the queue.
    AfterQueue,
}

/// Coding scheme of the engines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    /// Every packet is a random combination of the coding window (the paper's scheme).
    Dense,
    /// Each new segment is first sent uncoded.
    Systematic,
}

/// One run's settings. Defaults follow §VI of the implementation paper where they apply:
/// 6 Mbit/s, a 5-packet bottleneck queue with the loss element before it, 100-packet
/// encoder and decoder buffers, reno, W = 3, R = 1.25.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// `plain` or `nc`.
    pub mode: Mode,
    /// `reno`, `cubic`, `bbr` (lab) or `none` (sim).
    pub cc: Cc,
    /// Bernoulli loss probability on the data direction.
    pub loss: f64,
    /// Bernoulli loss probability on the ACK direction (sim only).
    pub reverse_loss: f64,
    /// Redundancy factor R (nc); absent: [`default_redundancy`] of `loss`.
    pub redundancy: Option<f64>,
    /// Coding window W in packets (nc).
    pub window: usize,
    /// Coding scheme (nc).
    pub scheme: Scheme,
    /// Encoder and decoder buffer in packets (nc, sim).
    pub buffer_packets: usize,
    /// Bottleneck rate, Mbit/s, both directions.
    pub rate_mbit: f64,
    /// One-way delay, ms, both directions.
    pub delay_ms: f64,
    /// Drop-tail bottleneck queue in packets, both directions.
    pub queue_packets: usize,
    /// `before_queue` or `after_queue` (the lab supports only `after_queue`).
    pub loss_position: LossPosition,
    /// Bytes per transfer (when `duration_s` is absent).
    pub bytes: u64,
    /// Session length in seconds (sim): send for this long, goodput = bytes read / duration.
    pub duration_s: Option<f64>,
    /// TCP socket send and receive buffers, KiB (sim).
    pub buffer_kib: usize,
    /// Delayed-ACK timeout of the receiving TCP, ms, 0 = none (sim).
    pub ack_delay_ms: u64,
    /// IP MTU of the TCP endpoints (sim).
    pub mtu: usize,
    /// Bound on one run: virtual seconds (sim, fixed-size transfers) or wall seconds (lab).
    pub timeout_s: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            mode: Mode::Nc,
            cc: Cc::Reno,
            loss: 0.0,
            reverse_loss: 0.0,
            redundancy: None,
            window: 3,
            scheme: Scheme::Dense,
            buffer_packets: 100,
            rate_mbit: 6.0,
            delay_ms: 15.0,
            queue_packets: 5,
            loss_position: LossPosition::BeforeQueue,
            bytes: 2_000_000,
            duration_s: None,
            buffer_kib: 64,
            ack_delay_ms: 10,
            mtu: 1500,
            timeout_s: 600.0,
        }
    }
}

/// The keys of [`Params`] in CSV column order.
pub const KEYS: [&str; 18] = [
    "mode",
    "cc",
    "loss",
    "reverse_loss",
    "redundancy",
    "window",
    "scheme",
    "buffer_packets",
    "rate_mbit",
    "delay_ms",
    "queue_packets",
    "loss_position",
    "bytes",
    "duration_s",
    "buffer_kib",
    "ack_delay_ms",
    "mtu",
    "timeout_s",
];

/// R when a plan gives none: the rule of `tcpnc sim` ([`tcpnc_sim::nc_box::default_redundancy`]).
pub use tcpnc_sim::nc_box::default_redundancy;

impl Params {
    /// The redundancy actually used.
    pub fn effective_redundancy(&self) -> f64 {
        self.redundancy
            .unwrap_or_else(|| default_redundancy(self.loss))
    }

    /// Range checks shared by every backend.
    pub fn validate(&self) -> Result<(), String> {
        let unit = |v: f64, k: &str| {
            if (0.0..1.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("{k} = {v} must be in [0, 1)"))
            }
        };
        unit(self.loss, "loss")?;
        unit(self.reverse_loss, "reverse_loss")?;
        let positive = |v: f64, k: &str| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("{k} = {v} must be > 0"))
            }
        };
        positive(self.rate_mbit, "rate_mbit")?;
        positive(self.timeout_s, "timeout_s")?;
        if !(self.delay_ms.is_finite() && self.delay_ms >= 0.0) {
            return Err(format!("delay_ms = {} must be >= 0", self.delay_ms));
        }
        if let Some(d) = self.duration_s {
            positive(d, "duration_s")?;
        }
        if let Some(r) = self.redundancy
            && !(r.is_finite() && (1.0..=16.0).contains(&r))
        {
            return Err(format!("redundancy = {r} must be in [1, 16]"));
        }
        if !(1..=255).contains(&self.window) {
            return Err(format!("window = {} must be in 1..=255", self.window));
        }
        if self.queue_packets == 0 || self.buffer_packets == 0 || self.buffer_kib == 0 {
            return Err("queue_packets, buffer_packets and buffer_kib must be > 0".into());
        }
        if self.bytes == 0 {
            return Err("bytes must be > 0".into());
        }
        Ok(())
    }

    /// The value of every key as written in the CSV (in [`KEYS`] order; absent = empty).
    pub fn cells(&self) -> Vec<String> {
        let v = serde_json::to_value(self).unwrap_or(Value::Null);
        KEYS.iter().map(|k| cell(&v[*k])).collect()
    }
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
        assert_eq!(c.len(), KEYS.len());
        assert_eq!(c[0], "nc");
        assert_eq!(c[2], "0.0");
        assert_eq!(c[4], "");
        assert_eq!(c[11], "before_queue");
        assert_eq!(default_redundancy(0.0), 1.0);
        assert!((default_redundancy(0.1) - (1.0 / 0.9 + 0.06)).abs() < 1e-12);
        let bad = Params {
            window: 0,
            ..Params::default()
        };
        assert!(bad.validate().unwrap_err().contains("window"));
    }
}
