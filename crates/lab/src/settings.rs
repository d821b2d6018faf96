//! What a lab run is configured with: the emulated path and the transfer. The path settings,
//! the coding policies and the congestion controls are the shared vocabulary's
//! (`tcpnc-settings`): the lab passes
//! the policy keys it was given ([`PolicyOverrides`]) to both gateways, which apply them to the
//! product's set.

use serde::{Deserialize, Serialize};
pub use tcpnc_settings::{CongestionControl, PathMode, PathOverrides, PathSpec, PolicyOverrides};

use crate::error::{LabError, Result};

/// The emulated path (the relay in the emulator namespace): the shared path settings
/// ([`PathSpec`], base [`PathSpec::lab`]) and the seed of the relay's loss model.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct PathSettings {
    /// Rate, delay, loss, bursts, jitter, queue, loss position.
    #[serde(flatten)]
    pub spec: PathSpec,
    /// Seed of the relay's loss model.
    pub seed: u64,
}

fn one_flow() -> usize {
    1
}

/// Most parallel flows one transfer may run.
pub const MAX_FLOWS: usize = 1000;

impl PathSettings {
    /// `spec` with loss-model seed `seed`.
    pub const fn new(spec: PathSpec, seed: u64) -> PathSettings {
        PathSettings { spec, seed }
    }

    /// Checks ranges (the error names the flag).
    pub fn validate(&self) -> Result<()> {
        self.spec
            .validate()
            .map_err(|e| LabError::Invalid(format!("--{}: {e}", e.key.replace('_', "-"))))
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
    fn errors_name_the_flag() {
        let mut p = PathSettings::new(PathSpec::lab(), 1);
        assert!(p.validate().is_ok());
        p.spec.reverse_loss = 1.0;
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains("--reverse-loss"), "{e}");
    }
}
