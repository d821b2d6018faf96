//! The arguments `tcpnc lab` commands share: the emulated path, the transfer and the coding
//! policies (wiring only; the settings they build are `tcpnc-lab`'s and `tcpnc-settings`').

use clap::Args;
use tcpnc_lab::settings::{PathSettings, TransferSettings};
use tcpnc_settings::{CongestionControl, PathOverrides, PathSpec, PolicyOverrides, Profile};

/// The emulated path: the lab's ([`PathSpec::lab`]) with the keys given.
#[derive(Debug, Clone, Args)]
pub struct PathArgs {
    /// Path settings (each replaces the lab path's value).
    #[command(flatten)]
    pub path: PathOverrides,
    /// Seed of the path's loss model.
    #[arg(long, default_value_t = 1)]
    pub path_seed: u64,
}

impl PathArgs {
    pub(crate) fn settings(&self) -> PathSettings {
        PathSettings::new(PathSpec::lab().with(&self.path), self.path_seed)
    }
}

/// The transfer.
#[derive(Debug, Clone, Args)]
pub struct TransferArgs {
    /// Bytes to send (suffixes k, M, G, KiB, MiB, GiB).
    #[arg(long, default_value = "20MB", value_parser = tcpnc_lab::parse_bytes)]
    pub bytes: u64,
    /// Sender's congestion control (set per socket with TCP_CONGESTION).
    #[arg(long, value_enum, default_value_t = CongestionControl::Cubic)]
    pub cc: CongestionControl,
    /// Seed of the data.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Parallel TCP connections, each sending --bytes; the result has each flow's goodput,
    /// the aggregate and Jain's fairness index.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub flows: usize,
    /// Bound on each transfer, seconds.
    #[arg(long, default_value_t = 600.0)]
    pub timeout_s: f64,
    /// Before the measured transfer, one transfer of this many bytes (one flow) through the
    /// same gateways, not measured: the measured one then starts on a path the gateways
    /// already know (path memory). The result's link and gateway counters cover both.
    /// Default: none.
    #[arg(long, value_parser = tcpnc_lab::parse_bytes, value_name = "BYTES")]
    pub warmup_bytes: Option<u64>,
}

impl TransferArgs {
    pub(crate) fn settings(&self) -> TransferSettings {
        TransferSettings {
            bytes: self.bytes,
            cc: self.cc,
            seed: self.seed,
            flows: self.flows,
            timeout_s: self.timeout_s,
            series: false,
            warmup_bytes: self.warmup_bytes.unwrap_or(0),
        }
    }
}

/// Coding policies of the nc gateways.
#[derive(Debug, Clone, Args)]
pub struct CodingArgs {
    /// Base policy set: default = the gateways' own (the product's: W 12, R auto, dense,
    /// seeded, deficit repair, Mitsuzumi's ACK rule); simulator or experiment = those sets for
    /// the emulated --loss (R fixed from it). The resolved set is handed to both gateways.
    #[arg(long, value_enum, default_value_t = Profile::Default)]
    pub profile: Profile,
    /// Policy keys; each replaces the profile's value.
    #[command(flatten)]
    pub policies: PolicyOverrides,
}

impl CodingArgs {
    /// The whole policy set for a path of loss rate `loss`, as gateway `[coding]` keys.
    pub(crate) fn resolved(&self, loss: f64) -> PolicyOverrides {
        PolicyOverrides::from(self.profile.policies(loss).with(&self.policies))
    }
}
