//! The gateway's error type: each variant is one thing the operator can act on.

use std::net::SocketAddr;
use std::path::PathBuf;

use thiserror::Error;

use crate::config::ConfigError;

/// Errors from starting or running a gateway.
#[derive(Debug, Error)]
pub enum GatewayError {
    /// The configuration is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Creating the TUN device was refused.
    #[error("tcpnc up needs root (CAP_NET_ADMIN) to create the TUN device")]
    NotRoot,
    /// `/dev/net/tun` is missing.
    #[error(
        "/dev/net/tun does not exist: load the tun module (modprobe tun) or run where TUN is available"
    )]
    NoTunDevice,
    /// Another TUN error.
    #[error("cannot create TUN device {name}: {source}")]
    Tun {
        /// Requested name.
        name: String,
        /// OS error.
        source: std::io::Error,
    },
    /// The UDP address is taken.
    #[error("UDP address {0} is already in use (another tcpnc or service is bound to it)")]
    AddrInUse(SocketAddr),
    /// Another bind error.
    #[error("cannot bind UDP {addr}: {source}")]
    Bind {
        /// Address.
        addr: SocketAddr,
        /// OS error.
        source: std::io::Error,
    },
    /// The first keepalive to a peer could not be sent: no route to it.
    #[error("peer {peer} at {endpoint} is unreachable: {source}")]
    PeerUnreachable {
        /// Peer name.
        peer: String,
        /// Endpoint.
        endpoint: SocketAddr,
        /// OS error (ENETUNREACH / EHOSTUNREACH ...).
        source: std::io::Error,
    },
    /// Adding a route failed.
    #[error("cannot add route {prefix}: {reason}")]
    Route {
        /// The prefix.
        prefix: String,
        /// What `ip route` said.
        reason: String,
    },
    /// The engine rejected its configuration.
    #[error("engine configuration rejected for peer {peer}: {reason}")]
    Engine {
        /// Peer name.
        peer: String,
        /// Reason.
        reason: String,
    },
    /// Engine shards that do not give every peer one engine each.
    #[error(
        "engine shards: {peers} peer(s) but shard sizes {shards:?} (each shard needs one engine per peer, at least one shard)"
    )]
    Shards {
        /// Number of peers.
        peers: usize,
        /// Engines per shard.
        shards: Vec<usize>,
    },
    /// The tunnel keys could not be set up (no random source, bad key).
    #[error("tunnel keys: {0}")]
    Keys(String),
    /// Writing or reading the stats file failed.
    #[error("stats file {path}: {source}")]
    Stats {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Installing the signal handlers failed.
    #[error("cannot install signal handlers: {0}")]
    Signal(std::io::Error),
    /// A device failed while running.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// The metrics server (`interface.metrics_listen`) could not start.
    #[error("cannot serve metrics on {addr}: {reason}")]
    Metrics {
        /// The address.
        addr: SocketAddr,
        /// Why.
        reason: String,
    },
}

impl From<tcpnc_io::BindError> for GatewayError {
    fn from(e: tcpnc_io::BindError) -> Self {
        match e {
            tcpnc_io::BindError::AddrInUse(addr) => GatewayError::AddrInUse(addr),
            tcpnc_io::BindError::Other { addr, source } => GatewayError::Bind { addr, source },
        }
    }
}

/// Whether an OS error means "no route to that address".
pub fn is_unreachable(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENETUNREACH) | Some(libc::EHOSTUNREACH) | Some(libc::EADDRNOTAVAIL)
    )
}
