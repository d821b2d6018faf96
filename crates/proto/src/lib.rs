//! The sans-IO TCP/NC engine (Sundararajan et al., "Interfacing network coding with TCP: an
//! implementation", §II–V): coding buffer, sender and receiver state machines, TCP segment
//! parsing and synthesis, policies, timers and statistics. Time (`now`) and seeds are passed in;
//! this crate performs no I/O and never reads the clock. See `docs/engine.md`.

pub mod coding_buffer;
pub mod tcp;

mod coalesce;
pub mod config;
pub mod connection;
pub mod context;
pub mod engine;
pub mod episode;
pub mod event;
pub mod flight_cap;
pub mod flight_share;
pub mod flow_id_conversion;
pub mod loss_burst;
pub mod loss_tracker;
pub mod output;
pub mod pacer;
pub mod path_memory;
pub mod pid_tracker;
pub mod queue_delay;
pub mod receiver;
pub mod redundancy;
pub mod reorder;
pub mod repair;
pub mod repair_budget;
pub mod rng;
pub mod seam;
pub mod sender;
pub mod shard;
pub mod stats;
pub mod tail_repair;
#[cfg(test)]
mod test_util;
pub mod testing;
pub mod vbnc;

pub use config::{ConfigError, EngineConfig, Limits};
pub use engine::Engine;
pub use event::{CloseReason, DropReason, Event};
pub use seam::{Counters, PassThrough, Seam};
pub use stats::{EngineStats, FlowStats};
pub use tcpnc_settings as settings;
pub use tcpnc_settings::{AckDecision, AckPolicy};
pub use tcpnc_settings::{
    CodingScheme, CoefficientTransport, Policies, PolicyOverrides, RedundancyPolicy, RepairPolicy,
};
pub use tcpnc_wire as wire;
pub use tcpnc_wire::FlowId;
