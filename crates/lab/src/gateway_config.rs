//! The `tcpnc up` configuration the lab writes for each of its gateways.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;

use tcpnc_gateway::config::{RawCoding, RawConfig, RawInterface, RawPeer};
use tcpnc_settings::CodingMode;

use crate::session::TUN_DEV;
use crate::settings::{PathMode, PathSettings, PolicyOverrides};
use crate::tunnel_mode::{TunnelMode, tun_mtu};

/// Addresses of one gateway: its tunnel address, its peer's, and its UDP ends.
#[derive(Debug, Clone, Copy)]
pub struct GatewayAddrs {
    /// This side's tunnel address (`/24`).
    pub me: Ipv4Addr,
    /// The other side's tunnel address (the only allowed IP).
    pub peer: Ipv4Addr,
    /// UDP listen address.
    pub listen: SocketAddr,
    /// The peer's UDP endpoint (the relay).
    pub endpoint: SocketAddr,
}

/// The `tcpnc up` configuration of one side, as the gateway's own config type: the lab's
/// contract with the gateway is checked at compile time. Insecure (integrity only);
/// [`Session::start`] replaces `insecure` with keys for [`TunnelMode::Secure`].
pub fn gateway_config(
    mode: PathMode,
    coding: &PolicyOverrides,
    path: &PathSettings,
    addrs: &GatewayAddrs,
    stats: &Path,
) -> RawConfig {
    let coding = match mode.gateway_mode() {
        Some(CodingMode::Nc) => RawCoding::new(CodingMode::Nc, coding, Some(path.seed)),
        _ => RawCoding::new(CodingMode::Off, &PolicyOverrides::default(), None),
    };
    RawConfig {
        interface: RawInterface {
            name: TUN_DEV.to_string(),
            address: format!("{}/24", addrs.me),
            mtu: Some(tun_mtu(TunnelMode::Insecure)),
            listen: addrs.listen.to_string(),
            stats_file: Some(stats.display().to_string()),
            insecure: Some(true),
            ..Default::default()
        },
        coding,
        peer: vec![RawPeer {
            name: None,
            endpoint: Some(addrs.endpoint.to_string()),
            allowed_ips: vec![format!("{}/32", addrs.peer)],
            keepalive_secs: None,
            public_key: None,
            preshared_key: None,
        }],
    }
}
