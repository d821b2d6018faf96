//! What a lab run is configured with: the emulated path and the transfer. The coding policies
//! and the congestion controls are the shared vocabulary's (`tcpnc-settings`): the lab passes
//! the policy keys it was given ([`PolicyOverrides`]) to both gateways, which apply them to the
//! product's set.

use serde::{Deserialize, Serialize};
pub use tcpnc_settings::{CongestionControl, PathMode, PolicyOverrides};

use crate::error::{LabError, Result};

/// The emulated path (the relay in the emulator namespace).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PathSettings {
    /// Bottleneck rate in Mbit/s, both directions.
    pub rate_mbit: f64,
    /// One-way delay in ms, applied in both directions.
    pub delay_ms: f64,
    /// Bernoulli loss probability on the data direction (client → server).
    pub loss: f64,
    /// Drop-tail queue in packets, both directions (`None`: one bandwidth-delay product,
    /// at least 32 packets).
    pub queue_packets: Option<usize>,
    /// Seed of the relay's loss model.
    pub seed: u64,
    /// Mean loss burst length in packets on the data direction: above 1 the loss is a
    /// Gilbert-Elliott process with mean loss `loss` and this mean burst (1: Bernoulli).
    #[serde(default = "one")]
    pub burst: f64,
    /// Uniform extra delay in [0, jitter_ms] per packet, both directions.
    #[serde(default)]
    pub jitter_ms: f64,
    /// Let the jitter reorder packets (otherwise each packet waits for its predecessor).
    #[serde(default)]
    pub reorder: bool,
    /// Bernoulli loss on the ACK direction (server → client).
    #[serde(default)]
    pub reverse_loss: f64,
}

fn one() -> f64 {
    1.0
}

fn one_flow() -> usize {
    1
}

/// Most parallel flows one transfer may run.
pub const MAX_FLOWS: usize = 1000;

impl PathSettings {
    /// Checks ranges.
    pub fn validate(&self) -> Result<()> {
        if !(self.rate_mbit.is_finite() && self.rate_mbit > 0.0) {
            return Err(LabError::Invalid("--rate-mbit must be > 0".into()));
        }
        if !(self.delay_ms.is_finite() && self.delay_ms >= 0.0) {
            return Err(LabError::Invalid("--delay-ms must be >= 0".into()));
        }
        if !(0.0..1.0).contains(&self.loss) {
            return Err(LabError::Invalid("--loss must be in [0, 1)".into()));
        }
        if !(0.0..1.0).contains(&self.reverse_loss) {
            return Err(LabError::Invalid("--reverse-loss must be in [0, 1)".into()));
        }
        if !(self.burst.is_finite() && self.burst >= 1.0) {
            return Err(LabError::Invalid("--burst must be >= 1 (packets)".into()));
        }
        if !(self.jitter_ms.is_finite() && self.jitter_ms >= 0.0) {
            return Err(LabError::Invalid("--jitter-ms must be >= 0".into()));
        }
        Ok(())
    }

    /// A path of `rate_mbit` and `delay_ms` with Bernoulli loss `loss` on the data direction
    /// and nothing else (queue: one bandwidth-delay product).
    pub fn new(rate_mbit: f64, delay_ms: f64, loss: f64, seed: u64) -> PathSettings {
        PathSettings {
            rate_mbit,
            delay_ms,
            loss,
            queue_packets: None,
            seed,
            burst: 1.0,
            jitter_ms: 0.0,
            reorder: false,
            reverse_loss: 0.0,
        }
    }

    /// The queue limit in packets actually used.
    pub fn queue(&self) -> usize {
        self.queue_packets.unwrap_or_else(|| {
            let bdp_bytes = self.rate_mbit * 1e6 / 8.0 * (2.0 * self.delay_ms / 1000.0);
            ((bdp_bytes / 1500.0).ceil() as usize).max(32)
        })
    }

    /// The ideal goodput limit C·(1−p) in Mbit/s (before header overhead).
    pub fn limit_mbit(&self) -> f64 {
        self.rate_mbit * (1.0 - self.loss)
    }
}

/// One transfer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TransferSettings {
    /// Bytes to send.
    pub bytes: u64,
    /// Sender's congestion control.
    pub cc: CongestionControl,
    /// Data seed (flow i sends the stream of seed + i).
    pub seed: u64,
    /// Parallel TCP connections, each sending `bytes`.
    #[serde(default = "one_flow")]
    pub flows: usize,
    /// Bound on the whole transfer (and on each wait inside it), seconds.
    pub timeout_s: f64,
}

impl TransferSettings {
    /// Checks the congestion control and sizes.
    pub fn validate(&self) -> Result<()> {
        if !self.cc.in_kernel() {
            return Err(LabError::Invalid(format!(
                "--cc {}: the kernel has reno, cubic and bbr",
                self.cc
            )));
        }
        if self.bytes == 0 {
            return Err(LabError::Invalid("--bytes must be > 0".into()));
        }
        if !(1..=MAX_FLOWS).contains(&self.flows) {
            return Err(LabError::Invalid(format!(
                "--flows {} (expected 1..={MAX_FLOWS})",
                self.flows
            )));
        }
        if !(self.timeout_s.is_finite() && self.timeout_s > 0.0) {
            return Err(LabError::Invalid("--timeout-s must be > 0".into()));
        }
        Ok(())
    }
}

/// Parses sizes like `20MB`, `512k`, `1MiB`, `1000000` (decimal units: k = 1000,
/// M = 10^6, G = 10^9; binary with an `i`: KiB, MiB, GiB).
pub fn parse_bytes(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let x: f64 = num.parse().map_err(|_| format!("'{s}' is not a size"))?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "ki" | "kib" => 1024.0,
        "mi" | "mib" => 1024.0 * 1024.0,
        "gi" | "gib" => 1024.0 * 1024.0 * 1024.0,
        u => return Err(format!("unknown size unit '{u}' in '{s}'")),
    };
    let v = (x * mult).round();
    if !(1.0..1e15).contains(&v) {
        return Err(format!("size '{s}' out of range"));
    }
    Ok(v as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("20MB"), Ok(20_000_000));
        assert_eq!(parse_bytes("1MiB"), Ok(1 << 20));
        assert_eq!(parse_bytes("512k"), Ok(512_000));
        assert_eq!(parse_bytes("1234"), Ok(1234));
        assert!(parse_bytes("x").is_err());
        assert!(parse_bytes("3 parsecs").is_err());
    }

    #[test]
    fn defaults_follow_the_path() {
        let p = PathSettings::new(20.0, 20.0, 0.1, 1);
        assert_eq!(p.queue(), 67);
        assert!((p.limit_mbit() - 18.0).abs() < 1e-9);
    }
}
