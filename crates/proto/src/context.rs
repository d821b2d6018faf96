//! What one call into the engine hands down to a connection and its two halves, instead of long
//! argument lists: the time of the call, the configuration, the engine's PRNG, the output queues
//! with the engine-wide counters, and (once a connection is chosen) that connection's counters.
//!
//! The engine builds a [`Call`] per `handle_*` call (quinn-proto passes `now` the same way); a
//! [`Connection`](crate::connection::Connection) turns it into a [`Context`] by adding its own
//! [`FlowStats`], and passes `&mut Context` to the half that acts.

use std::time::Duration;

use crate::config::EngineConfig;
use crate::output::Output;
use crate::path_memory::PathEstimate;
use crate::rng::EngineRng;
use crate::stats::FlowStats;

/// The engine-wide part of a call: everything but the connection's counters.
#[derive(Debug)]
pub struct Call<'a> {
    /// The `now` given to the `handle_*` call being served.
    pub now: Duration,
    /// The engine's configuration.
    pub config: &'a EngineConfig,
    /// The engine's deterministic PRNG (coefficients and seeds).
    pub rng: &'a mut EngineRng,
    /// Output queues and engine-wide counters.
    pub out: &'a mut Output,
    /// What the engine knows of its path (`path_memory.rs`).
    pub path: &'a mut PathEstimate,
}

impl<'a> Call<'a> {
    /// The context for a connection whose counters are `stats`.
    pub fn with_stats(self, stats: &'a mut FlowStats) -> Context<'a> {
        Context {
            now: self.now,
            config: self.config,
            rng: self.rng,
            out: self.out,
            path: self.path,
            stats,
        }
    }
}

/// A [`Call`] plus the counters of the connection it is for.
#[derive(Debug)]
pub struct Context<'a> {
    /// The `now` given to the `handle_*` call being served.
    pub now: Duration,
    /// The engine's configuration.
    pub config: &'a EngineConfig,
    /// The engine's deterministic PRNG.
    pub rng: &'a mut EngineRng,
    /// Output queues and engine-wide counters.
    pub out: &'a mut Output,
    /// What the engine knows of its path (`path_memory.rs`).
    pub path: &'a mut PathEstimate,
    /// The connection's counters (both halves).
    pub stats: &'a mut FlowStats,
}
