//! The sans-IO TCP/NC engine (Sundararajan et al., "Interfacing network coding with TCP: an
//! implementation", §II–V): coding buffer, sender and receiver state machines, TCP segment
//! parsing and synthesis, policies, timers and statistics. Time (`now`) and seeds are passed in;
//! this crate performs no I/O and never reads the clock. See `docs/engine.md`.

pub mod coding_buffer;
pub mod tcp;

pub mod ack_policy;
pub mod config;
pub mod engine;
pub mod episode;
pub mod event;
pub mod flow;
pub mod hooks;
pub mod ident;
pub mod loss_tracker;
pub mod output;
pub mod receiver;
pub mod redundancy;
pub mod repair;
pub mod rng;
pub mod seam;
pub mod sender;
pub mod stats;
#[cfg(test)]
mod test_util;
pub mod testing;

pub use ack_policy::{AckDecision, AckPolicy};
pub use config::{CodingScheme, CoefficientTransport, ConfigError, EngineConfig, Limits};
pub use engine::Engine;
pub use event::{CloseReason, DropReason, Event};
pub use hooks::{AckHoldPolicy, RepairPolicy, WindowPolicy};
pub use redundancy::RedundancyPolicy;
pub use seam::{Counters, PassThrough, Seam};
pub use stats::{EngineStats, FlowStats};
pub use tcpnc_wire::FlowId;
