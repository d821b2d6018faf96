//! tcpnc gateway: the layer that talks to the OS.
//!
//! * [`config`]: the WireGuard-like TOML file of `tcpnc up`, validated with errors naming
//!   the key and the reason; its `[coding]` table in [`coding_config`].
//! * [`io`]: the [`io::Tun`] / [`io::Udp`] seams and in-memory fakes, with [`tun_batch`]: the
//!   TUN's batches (offload segments in, GRO batches out) and [`tun_gro`]: the write-side TCP
//!   GRO of an offloading TUN; [`sys`]: the real TUN
//!   (tun-rs) and routes (UDP sockets come from `tcpnc-io`, shared with the `tcpnc link` relay
//!   of `tcpnc-relay`).
//! * [`peer_engine`]: the per-peer engine the loop drives, a [`tcpnc_proto::seam::Seam`]
//!   element: the TCP/NC engine or the uncoded tagged pass-through.
//! * [`gateway`]: the event loop (reader threads, `readers.rs`, + one owner thread), routing by
//!   allowed_ips (longest prefix), peers by their authenticated datagrams, counters; the
//!   engines on the owner thread or sharded by connection over worker threads
//!   (`engines.rs`, `workers.rs`, `parcel.rs`; `interface.workers`).
//! * [`up`]: `tcpnc up` assembled from the above on real devices.
//! * [`stats`]: the JSON stats snapshot and its rendering.
//! * [`monitor`]: peer liveness, one log line per notable event, samples for recorders;
//!   [`metrics`] + [`metrics_http`]: the Prometheus exporter on `interface.metrics_listen`;
//!   [`operate`]: the operator keys of `[interface]` (`metrics_listen`, `log_level`).
//! * [`bench_driver`]: one gateway on the fake devices against an in-process driver (both
//!   TCPs and the remote peer's engine) for `tcpnc bench gateway`.

pub mod bench_driver;
pub mod cidr;
pub mod coding_config;
pub mod config;
mod engines;
pub mod error;
pub mod gateway;
pub mod io;
pub mod metrics;
pub mod metrics_http;
pub mod monitor;
pub mod operate;
mod parcel;
pub mod peer_engine;
mod readers;
pub mod security;
pub mod shutdown;
pub mod stats;
pub mod stats_watch;
pub mod sys;
pub mod tun_batch;
pub mod tun_gro;
pub mod up;
mod workers;

pub use config::{Config, ConfigError};
pub use error::GatewayError;
pub use gateway::{Gateway, GatewayHandle, GatewayOptions};
