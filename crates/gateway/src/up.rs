//! `tcpnc up`: a gateway on real devices, assembled from a validated [`Config`].
//!
//! Order of start-up, so that each failure is reported before anything is left behind:
//! bind UDP (address in use) → create the TUN (root, `/dev/net/tun`) → add routes →
//! build one engine per peer → send the first keepalive to each peer (unreachable) → run.
//! On return the TUN device is closed (the kernel removes it and its routes) and the routes
//! this process added are deleted.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::config::Config;
use crate::error::GatewayError;
use crate::gateway::{Gateway, GatewayOptions};
use crate::metrics::PrometheusExporter;
use crate::metrics_http::MetricsServer;
use crate::monitor::Monitor;
use crate::stats::Snapshot;
use crate::sys::{Routes, SysTun, SysUdp};
use tcpnc_io::udp::UDP_BUFFER_BYTES;
use tcpnc_proto::settings::CodingMode;

/// Run-time options of `tcpnc up` that are not in the config file.
#[derive(Debug, Clone)]
pub struct UpOptions {
    /// Overrides `interface.stats_file`.
    pub stats_file: Option<PathBuf>,
    /// Snapshot period (default 1 s).
    pub stats_interval: Duration,
}

impl Default for UpOptions {
    fn default() -> Self {
        UpOptions {
            stats_file: None,
            stats_interval: Duration::from_secs(1),
        }
    }
}

/// The prefixes that need a route through the TUN: allowed_ips not already inside the
/// interface address's own (connected) prefix.
pub fn routes_needed(config: &Config) -> Vec<crate::cidr::Cidr> {
    let own = config.interface.address;
    config
        .peers
        .iter()
        .flat_map(|p| p.allowed_ips.iter().copied())
        .filter(|c| !(c.prefix >= own.prefix && own.contains(c.network())))
        .collect()
}

/// The gateway's monitor for `config`, with the Prometheus exporter and its HTTP server
/// when `interface.metrics_listen` is set (the server stops when dropped).
pub fn monitor_for(config: &Config) -> Result<(Monitor, Option<MetricsServer>), GatewayError> {
    let window = (config.coding.mode == CodingMode::Nc).then_some(config.coding.policies.window);
    let buffers = window.map(|_| config.coding.buffers());
    let mut monitor = Monitor::new(&config.peers, window).with_buffers(buffers);
    let server = match config.interface.operate.metrics_listen {
        Some(addr) => {
            let exporter = PrometheusExporter::new(&config.interface.name);
            let server = MetricsServer::start(addr, exporter.handle())?;
            tracing::info!(%addr, "serving Prometheus metrics on /metrics");
            monitor.add_recorder(Box::new(exporter));
            Some(server)
        }
        None => None,
    };
    Ok((monitor, server))
}

/// Tells the service manager that start-up is complete (`Type=notify` units: `READY=1` on
/// `$NOTIFY_SOCKET`; nothing when the variable is unset).
fn notify_ready(config: &Config) {
    let status = format!(
        "{} up, listening on {}, {} peer(s)",
        config.interface.name,
        config.interface.listen,
        config.peers.len()
    );
    let states = [
        sd_notify::NotifyState::Ready,
        sd_notify::NotifyState::Status(&status),
    ];
    if let Err(e) = sd_notify::notify(&states) {
        tracing::warn!("sd_notify: {e}");
    }
}

/// Runs a gateway on real devices until `shutdown` is set; returns the final snapshot.
pub fn up(
    config: &Config,
    opts: &UpOptions,
    shutdown: Arc<AtomicBool>,
) -> Result<Snapshot, GatewayError> {
    let iface = &config.interface;
    let udp = SysUdp::bind(iface.listen)?;
    match udp.set_buffers(UDP_BUFFER_BYTES) {
        Ok((rx, tx)) => tracing::debug!("UDP socket buffers: receive {rx} B, send {tx} B"),
        Err(e) => tracing::warn!("cannot size the UDP socket buffers: {e}"),
    }
    if iface.udp_gso && !udp.set_gso(true) {
        tracing::info!("the kernel has no UDP GSO (UDP_SEGMENT): plain sendmmsg");
    }
    if iface.udp_gro && !udp.set_gro(true) {
        tracing::info!("the kernel has no UDP GRO (UDP_GRO): plain recvmmsg");
    }
    let tun = SysTun::create(
        &iface.name,
        iface.address,
        iface.mtu,
        iface.tun_offload,
        iface.tun_queues,
    )?;
    let mut routes = Routes::new(tun.name());
    if iface.routes {
        for c in routes_needed(config) {
            routes.add(c)?;
        }
    }
    let shards = crate::peer_engine::shards_for(config)?;
    let options = GatewayOptions {
        interface: tun.name().to_string(),
        mode: config.coding.mode,
        stats_file: Some(
            opts.stats_file
                .clone()
                .unwrap_or_else(|| iface.stats_file.clone()),
        ),
        stats_interval: opts.stats_interval,
        queue_packets: iface.queue_packets,
        security: config.security.clone(),
    };
    let mut gateway = Gateway::with_shards(options, tun, udp, config.peers.clone(), shards)?;
    let (monitor, metrics) = monitor_for(config)?;
    gateway.set_monitor(monitor);
    gateway.probe_peers()?;
    notify_ready(config);
    let result = gateway.run(shutdown);
    let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
    drop(metrics);
    drop(routes);
    result
}
