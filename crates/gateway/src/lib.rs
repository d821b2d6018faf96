//! tcpnc gateway: the layer that talks to the OS.
//!
//! * [`config`]: the WireGuard-like TOML file of `tcpnc up`, validated with errors naming
//!   the key and the reason.
//! * [`io`]: the [`io::Tun`] / [`io::Udp`] seams and in-memory fakes; [`sys`]: the real TUN
//!   (tun-rs) and routes (UDP sockets come from `tcpnc-io`, shared with the `tcpnc link` relay
//!   of `tcpnc-relay`).
//! * [`peer_engine`]: the per-peer engine the loop drives, a [`tcpnc_proto::seam::Seam`]
//!   element: the TCP/NC engine or the uncoded tagged pass-through.
//! * [`ip_header`]: the one reader of IP headers of any protocol (routing, pass-through).
//! * [`gateway`]: the event loop (reader threads + one owner thread), routing by
//!   allowed_ips (longest prefix), peers by endpoint, counters.
//! * [`up`]: `tcpnc up` assembled from the above on real devices.
//! * [`stats`]: the JSON stats snapshot and its rendering.

pub mod cidr;
pub mod config;
pub mod error;
pub mod gateway;
pub mod io;
pub mod ip_header;
pub mod peer_engine;
pub mod security;
pub mod shutdown;
pub mod stats;
pub mod sys;
pub mod up;

pub use config::{Config, ConfigError};
pub use error::GatewayError;
pub use gateway::{Gateway, GatewayHandle, GatewayOptions};
