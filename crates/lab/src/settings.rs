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
    /// Record the transfer's time series (`tcpnc lab run --series`; one flow).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub series: bool,
    /// Bytes of one unmeasured transfer through the same gateways before the measured one
    /// (`tcpnc lab run --warmup-bytes`): the measured transfer then runs on a path the
    /// gateways already know (path memory, docs/engine.md). 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warmup_bytes: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
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
        if self.series && self.flows > 1 {
            return Err(LabError::Invalid(
                "--series records one flow; use --flows 1".into(),
            ));
        }
        if !(self.timeout_s.is_finite() && self.timeout_s > 0.0) {
            return Err(LabError::Invalid("--timeout-s must be > 0".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_flag() {
        let mut p = PathSettings::new(PathSpec::lab(), 1);
        assert!(p.validate().is_ok());
        p.spec.reverse_loss = 1.0;
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains("--reverse-loss"), "{e}");
    }
}
