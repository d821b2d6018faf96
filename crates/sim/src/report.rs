//! Simulation results.

use std::collections::BTreeMap;
use std::time::Duration;

use tcpnc_link::LinkStats;

use crate::series::Series;
use crate::tcp_counters::TcpCounters;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimOutcome {
    /// The server application read every byte.
    Completed,
    /// The virtual time limit (`SimConfig::max_sim_time`) was reached first.
    TimeLimit,
    /// Nothing was scheduled any more (no timers, nothing in flight) before completion,
    /// or one instant needed an unbounded amount of work.
    Stalled,
    /// A socket left the connection (reset or closed) before the transfer completed.
    ConnectionClosed,
}

impl SimOutcome {
    /// A short lowercase name (`completed`, `time_limit`, `stalled`, `connection_closed`).
    pub fn as_str(self) -> &'static str {
        match self {
            SimOutcome::Completed => "completed",
            SimOutcome::TimeLimit => "time_limit",
            SimOutcome::Stalled => "stalled",
            SimOutcome::ConnectionClosed => "connection_closed",
        }
    }
}

/// The measured result of one run. Same config and seed ⇒ equal reports (`==`).
#[derive(Debug, Clone, PartialEq)]
pub struct SimReport {
    /// How the run ended.
    pub outcome: SimOutcome,
    /// Virtual time from the client's connect (t = 0) until the server application
    /// had read all bytes; for an unfinished run, the virtual time at which it stopped.
    pub completion: Duration,
    /// `completion` in seconds.
    pub completion_s: f64,
    /// Application payload bits delivered / `completion_s`, in Mbit/s (10⁶ bit/s).
    pub goodput_mbit: f64,
    /// Completed, and the server read exactly `bytes_requested` bytes with the same
    /// SHA-256 as the client wrote.
    pub integrity_ok: bool,
    /// Bytes the client was asked to send.
    pub bytes_requested: u64,
    /// Bytes the client application had handed to its socket.
    pub bytes_written: u64,
    /// Bytes the server application read.
    pub bytes_delivered: u64,
    /// SHA-256 of the bytes written (all of them, when completed).
    pub sha256_sent: [u8; 32],
    /// SHA-256 of the bytes read.
    pub sha256_received: [u8; 32],
    /// Data-direction (client → server) link counters.
    pub forward: LinkStats,
    /// ACK-direction (server → client) link counters.
    pub reverse: LinkStats,
    /// Counters of the client-side box.
    pub client_box: BTreeMap<String, u64>,
    /// Counters of the server-side box.
    pub server_box: BTreeMap<String, u64>,
    /// TCP counters observed at the endpoints' egress.
    pub tcp: TcpCounters,
    /// Distinct virtual instants the event loop visited.
    pub steps: u64,
    /// The sending TCP's flight size (bytes sent and not acknowledged, as its egress and the
    /// ACKs reaching it show; bounded by cwnd, which smoltcp does not expose) averaged over
    /// virtual time from the connect to the end of the run.
    pub flight_mean_bytes: f64,
    /// The time series, when [`crate::SimConfig::series_interval`] asked for one.
    pub series: Option<Series>,
}
