//! tcpnc's one vocabulary: every setting and policy of the engine and of the runs around it,
//! defined once with its default and the reason for it.
//!
//! The gateway config (`tcpnc up`), `tcpnc sim`, `tcpnc lab`, experiment plans and every result's
//! JSON use these types directly: serde reads and writes them with the same words, and with the
//! `clap` feature they are command-line flags ([`PolicyOverrides`] is a `clap::Args` group). The
//! engine (`tcpnc-proto`) re-exports them. See `docs/architecture.md`.

pub mod named;
pub mod paper_profiles;
pub mod path;
pub mod policies;
pub mod policy;
pub mod policy_overrides;
pub mod redundancy;
pub mod run;
pub mod series;
pub mod size;
pub mod window;

pub use named::UnknownName;
pub use path::{LossPosition, PathError, PathOverrides, PathSpec};
pub use policies::{
    MAX_CODING_WINDOW, PAPER_REDUNDANCY, PAPER_WINDOW, PB_BLOCK, PRODUCT_WINDOW, Policies,
    PolicyError, PolicyOverrides, Profile, SIMULATOR_WINDOW,
};
pub use policy::{
    AckDecision, AckPolicy, BurstSignal, CodingScheme, CoefficientTransport, CongestionRule,
    RepairPolicy, Switch,
};
pub use redundancy::{
    ADAPTIVE_MAX_REDUNDANCY, MAX_REDUNDANCY, RA_BLOCK, RedundancyError, RedundancyPolicy,
};
pub use run::{CodingMode, CongestionControl, PathMode};
pub use series::{SERIES_INTERVAL, SeriesColumn};
pub use size::parse_bytes;
pub use window::WindowPolicy;
