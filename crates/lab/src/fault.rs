//! Fault injection in a lab session: which gateway to `kill -9` and restart, and when.

use std::time::Duration;

use serde::Serialize;

/// Which gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GatewaySide {
    /// The client's (data sender's) gateway.
    Client,
    /// The server's (data receiver's) gateway.
    Server,
}

/// Fault injection: `kill -9` one gateway `after` the session started and start it again at
/// once with the same configuration (same keys, all engine state lost). What must follow is
/// in `docs/gateway.md` ("Restarts"): the transfer completes or both applications see a reset.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GatewayFault {
    /// The gateway killed.
    pub side: GatewaySide,
    /// When, after the session started.
    pub after: Duration,
}
