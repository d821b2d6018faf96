//! The streaming workload of issue 12 (Parejiya & Desai, "Transforming network coding with TCP
//! for broadcasting streaming data"): frames of given sizes written at given times into one TCP
//! connection, and what a player cares about — each frame's one-way latency, jitter and stalls.
//!
//! * [`trace`]: a frame trace ([`Trace`]), a seeded synthetic MPEG-4-like VBR generator
//!   ([`TraceModel`], with presets shaped like the paper's Table I) and a text file format.
//! * [`metrics`]: per-frame records and their summary ([`StreamSummary`]).
//! * [`spec`]: the stream's flags ([`StreamSpec`]), shared by `tcpnc sim`, `tcpnc lab stream`
//!   and experiment plans, and the choice of workload ([`Workload`]).
//!
//! Sans-IO like the protocol core: times are passed in, randomness is a seed; the simulator
//! (`tcpnc sim --workload stream`) and the lab (`tcpnc lab stream`) drive it. It is its own
//! crate because both the simulator and the lab need it and neither should depend on the other;
//! it is not a setting, so it does not belong in `tcpnc-settings`.

pub mod metrics;
pub mod spec;
pub mod trace;

pub use metrics::{
    FrameRecord, SeriesError, StreamSummary, jitters, parse_series_csv, series_csv, summarize,
};
pub use spec::{DEFAULT_DEADLINE_MS, LAB_DURATION_S, SIM_DURATION_S, StreamSpec, Workload};
pub use trace::{Frame, FrameType, Preset, Trace, TraceError, TraceModel, TraceSummary};
