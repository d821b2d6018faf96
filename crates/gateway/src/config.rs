//! The gateway configuration file (`tcpnc up --config FILE`): WireGuard-like TOML.
//!
//! Parsing is two-step: serde reads [`RawConfig`] (strings, unknown keys rejected), then
//! [`RawConfig::validate`] turns it into a typed [`Config`], naming the offending key and the
//! reason for every rejection. See `docs/gateway.md` for the reference and an example.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tcpnc_proto::settings::CodingMode;
use tcpnc_wire::{OUTER_HEADER_V4, OUTER_HEADER_V6};
use thiserror::Error;

use crate::cidr::{Cidr, first_host, max_prefix};
use crate::operate::Operate;
use crate::security::{self, Security};
use tcpnc_tunnel::Key;

pub use crate::coding_config::{Coding, RawCoding};

/// Smallest accepted TUN MTU (the IPv4 minimum datagram size every host must accept).
pub const MIN_MTU: u16 = 576;

/// Most engine workers a gateway accepts (`interface.workers`).
pub const MAX_WORKERS: usize = 256;

/// The default of `interface.workers`: the cores this process may run on
/// (`std::thread::available_parallelism`; 1 when unknown), at most [`MAX_WORKERS`].
pub fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1)
        .min(MAX_WORKERS)
}

/// `interface.workers`: [`default_workers`] when absent, else 1..=[`MAX_WORKERS`].
fn validate_workers(workers: Option<usize>) -> Result<usize, ConfigError> {
    count_within(
        "interface.workers",
        workers.unwrap_or_else(default_workers),
        MAX_WORKERS,
    )
}

/// `n` when in 1..=`max`, else the error naming `key`.
fn count_within(key: &str, n: usize, max: usize) -> Result<usize, ConfigError> {
    if !(1..=max).contains(&n) {
        return Err(ConfigError::invalid(
            key,
            format!("{n} is outside 1..={max}"),
        ));
    }
    Ok(n)
}

/// Most TUN queues a gateway accepts (`interface.tun_queues`): Linux's `MAX_TAP_QUEUES`.
pub const MAX_TUN_QUEUES: usize = 256;

/// The default of `interface.tun_queues`: one queue, one TUN reader thread (docs/speed.md
/// "Multi-queue TUN" has the measurement behind it).
pub const DEFAULT_TUN_QUEUES: usize = 1;

/// `interface.tun_queues`: [`DEFAULT_TUN_QUEUES`] when absent, else 1..=[`MAX_TUN_QUEUES`].
fn validate_tun_queues(queues: Option<usize>) -> Result<usize, ConfigError> {
    let n = queues.unwrap_or(DEFAULT_TUN_QUEUES);
    count_within("interface.tun_queues", n, MAX_TUN_QUEUES)
}

/// A configuration error: which key, and why.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The TOML is malformed, has an unknown key, or a value of the wrong type.
    #[error("config is not valid TOML for tcpnc: {0}")]
    Syntax(String),
    /// A value is well-formed but not acceptable.
    #[error("config key `{key}`: {reason}")]
    Invalid {
        /// Dotted path of the key, e.g. `peer[1].allowed_ips[0]`.
        key: String,
        /// Why it was rejected.
        reason: String,
    },
}

impl ConfigError {
    pub(crate) fn invalid(key: impl Into<String>, reason: impl Into<String>) -> Self {
        ConfigError::Invalid {
            key: key.into(),
            reason: reason.into(),
        }
    }

    /// The offending key, for [`ConfigError::Invalid`].
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::Invalid { key, .. } => Some(key),
            _ => None,
        }
    }
}

/// The file as written (strings; checked by [`RawConfig::validate`]).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// `[interface]`.
    pub interface: RawInterface,
    /// `[coding]` (optional; defaults to NC with W = 16, R = 1.0, systematic).
    #[serde(default)]
    pub coding: RawCoding,
    /// `[[peer]]`, at least one.
    #[serde(default)]
    pub peer: Vec<RawPeer>,
}

/// `[interface]` as written.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawInterface {
    /// TUN device name.
    pub name: String,
    /// Local tunnel address with prefix, e.g. `10.77.0.1/24`.
    pub address: String,
    /// TUN MTU (default 1400).
    pub mtu: Option<u16>,
    /// Local UDP `addr:port`.
    pub listen: String,
    /// MTU of the underlying path (default 1500).
    pub path_mtu: Option<u16>,
    /// Add routes for allowed_ips outside `address` (default true).
    pub routes: Option<bool>,
    /// Stats file (default `/run/tcpnc/<name>.json`).
    pub stats_file: Option<String>,
    /// Bound of the gateway's input queue in packets (default 4096).
    pub queue_packets: Option<usize>,
    /// TUN offloads (`IFF_VNET_HDR`: large TCP segments in, GRO out) when the kernel accepts
    /// them (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tun_offload: Option<bool>,
    /// UDP GSO (`UDP_SEGMENT`) for batched sends when the kernel has it (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_gso: Option<bool>,
    /// UDP GRO (`UDP_GRO`) on receive when the kernel has it (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_gro: Option<bool>,
    /// Engine worker threads the connections are sharded over (default: the number of
    /// cores, [`default_workers`]; 1 runs the engines on the owner thread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<usize>,
    /// Receive queues of the TUN (`IFF_MULTI_QUEUE`), each read by its own thread (default
    /// [`DEFAULT_TUN_QUEUES`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tun_queues: Option<usize>,
    /// Serve Prometheus metrics on this `addr:port` (default: no metrics server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_listen: Option<String>,
    /// Log level when `RUST_LOG` is not set (default `info`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_level: Option<String>,
    /// No keys: frames carry a CRC-32C only (labs); excludes `private_key`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub insecure: Option<bool>,
    /// This gateway's static private key (base64, `tcpnc genkey`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub private_key: Option<String>,
    /// A file holding the private key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub private_key_file: Option<String>,
    /// The cipher of the handshakes this gateway initiates: `auto` (default),
    /// `chacha20-poly1305` or `aes-256-gcm` ([`crate::security::CipherSetting`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher: Option<String>,
}

/// `[[peer]]` as written.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawPeer {
    /// Optional display name.
    pub name: Option<String>,
    /// Peer UDP `addr:port` (optional with keys: learned from the peer's datagrams).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Destination prefixes routed to this peer.
    pub allowed_ips: Vec<String>,
    /// Send an empty keepalive datagram this often (seconds; 0 or absent = only at start).
    pub keepalive_secs: Option<u64>,
    /// The peer's static public key (base64, `tcpnc pubkey`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
    /// Optional preshared key (base64, `tcpnc genkey`), mixed into the handshake.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preshared_key: Option<String>,
}

/// A validated `[interface]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Interface {
    /// TUN name.
    pub name: String,
    /// Local tunnel address and prefix.
    pub address: Cidr,
    /// TUN MTU.
    pub mtu: u16,
    /// UDP listen address.
    pub listen: SocketAddr,
    /// Underlying path MTU.
    pub path_mtu: u16,
    /// Whether to add routes for allowed_ips.
    pub routes: bool,
    /// Stats snapshot file.
    pub stats_file: PathBuf,
    /// Input queue bound (packets).
    pub queue_packets: usize,
    /// Ask for TUN offloads (`IFF_VNET_HDR`); a kernel that refuses them gets a plain TUN.
    pub tun_offload: bool,
    /// Send trains of same-size datagrams to one peer as one UDP GSO message
    /// (`tcpnc_io::gso`); a kernel without `UDP_SEGMENT`, or a path that refuses it, gets
    /// plain `sendmmsg`.
    pub udp_gso: bool,
    /// Let the kernel coalesce received datagrams of one peer into one message (UDP GRO,
    /// `tcpnc_io::gro`; the reader cuts them apart again); a kernel without `UDP_GRO` gets
    /// plain receives.
    pub udp_gro: bool,
    /// Engine workers (1..=[`MAX_WORKERS`]); 1 = engines on the owner thread.
    pub workers: usize,
    /// TUN queues (1..=[`MAX_TUN_QUEUES`]), one reader thread each; writes go to each
    /// connection's queue so that the kernel steers its packets back there.
    pub tun_queues: usize,
    /// Operator keys: metrics server, log level ([`crate::operate`]).
    pub operate: Operate,
}

/// A validated `[[peer]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Peer {
    /// Display name (`peer<i>` when absent).
    pub name: String,
    /// UDP endpoint (`None`: learned from the peer's first authenticated datagram).
    pub endpoint: Option<SocketAddr>,
    /// Prefixes routed to this peer.
    pub allowed_ips: Vec<Cidr>,
    /// Keepalive period in seconds (0 = only the start-up probe).
    pub keepalive_secs: u64,
    /// The peer's static public key (keys mode).
    pub public_key: Option<Key>,
    /// The preshared key, if any.
    pub preshared_key: Option<Key>,
}

/// A validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `[interface]`.
    pub interface: Interface,
    /// `[coding]`.
    pub coding: Coding,
    /// `[[peer]]`.
    pub peers: Vec<Peer>,
    /// Keys or `insecure = true`.
    pub security: Security,
}

impl Config {
    /// Reads, parses and validates a file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Config::parse(&text)
    }

    /// Parses and validates TOML text.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let raw: RawConfig =
            toml::from_str(text).map_err(|e| ConfigError::Syntax(e.to_string()))?;
        raw.validate()
    }

    /// Bytes available for one tunnel datagram's UDP payload on the underlying path.
    /// (The envelope's own bytes, [`Security::overhead`], are taken off.)
    pub fn tunnel_payload(&self) -> usize {
        usize::from(self.interface.path_mtu)
            .saturating_sub(self.interface.outer_header() + self.security.overhead())
    }
}

impl Config {
    /// The engine's own check of the coding settings against the path: the MSS left after the
    /// largest coding header (`EngineConfig::mss_clamp`) must be usable. Reported against
    /// `interface.path_mtu`, the value that usually has to change.
    fn check_engine(&self) -> Result<(), ConfigError> {
        if self.coding.mode == CodingMode::Off {
            return Ok(());
        }
        match crate::peer_engine::engine_config(self).validate() {
            Ok(()) => Ok(()),
            Err(e @ tcpnc_proto::ConfigError::TunnelMtu { .. }) => Err(ConfigError::invalid(
                "interface.path_mtu",
                format!(
                    "{} is too small for the coding header: {e}; raise path_mtu or lower coding.window",
                    self.interface.path_mtu
                ),
            )),
            Err(e) => Err(ConfigError::invalid("coding", e.to_string())),
        }
    }
}

impl Interface {
    /// Bytes of outer IP and UDP header around each tunnel datagram on this interface.
    pub fn outer_header(&self) -> usize {
        if self.listen.is_ipv4() {
            OUTER_HEADER_V4
        } else {
            OUTER_HEADER_V6
        }
    }
}

fn parse_cidr(key: &str, s: &str) -> Result<Cidr, ConfigError> {
    s.parse::<Cidr>()
        .map_err(|e| ConfigError::invalid(key, e.to_string()))
}

pub(crate) fn parse_sockaddr(key: &str, s: &str) -> Result<SocketAddr, ConfigError> {
    s.trim().parse::<SocketAddr>().map_err(|_| {
        ConfigError::invalid(
            key,
            format!("'{s}' is not IP:PORT (IPv6 as [addr]:port; host names are not resolved)"),
        )
    })
}

impl RawConfig {
    /// The file text (what [`Config::parse`] reads back): programs that start gateways (the
    /// lab) build a [`RawConfig`] value instead of writing TOML by hand.
    pub fn to_toml(&self) -> Result<String, ConfigError> {
        toml::to_string(self).map_err(|e| ConfigError::Syntax(e.to_string()))
    }

    /// Checks every value and builds the typed [`Config`].
    pub fn validate(self) -> Result<Config, ConfigError> {
        let security = security::interface_security(&self.interface)?;
        let interface = self.interface.validate()?;
        let coding = self.coding.validate(&interface)?;
        if self.peer.is_empty() {
            return Err(ConfigError::invalid(
                "peer",
                "at least one [[peer]] is required",
            ));
        }
        let mut peers: Vec<Peer> = Vec::with_capacity(self.peer.len());
        for (i, raw) in self.peer.into_iter().enumerate() {
            let p = raw.validate(i, &interface, &security)?;
            for (j, other) in peers.iter().enumerate() {
                if other.endpoint.is_some() && other.endpoint == p.endpoint {
                    return Err(ConfigError::invalid(
                        format!("peer[{i}].endpoint"),
                        format!(
                            "{} is also the endpoint of peer[{j}] (\"{}\"); datagrams are matched to peers by endpoint",
                            p.endpoint.map(|e| e.to_string()).unwrap_or_default(),
                            other.name
                        ),
                    ));
                }
                for (k, a) in p.allowed_ips.iter().enumerate() {
                    if let Some(b) = other.allowed_ips.iter().find(|b| a.overlaps(b)) {
                        return Err(ConfigError::invalid(
                            format!("peer[{i}].allowed_ips[{k}]"),
                            format!(
                                "{a} overlaps {b} of peer[{j}] (\"{}\"); each destination must belong to one peer",
                                other.name
                            ),
                        ));
                    }
                }
            }
            peers.push(p);
        }
        if interface.routes {
            for (i, p) in peers.iter().enumerate() {
                for (k, c) in p.allowed_ips.iter().enumerate() {
                    if let Some((q, e)) = peers
                        .iter()
                        .find_map(|q| q.endpoint.filter(|e| c.contains(e.ip())).map(|e| (q, e)))
                    {
                        return Err(ConfigError::invalid(
                            format!("peer[{i}].allowed_ips[{k}]"),
                            format!(
                                "{c} contains the endpoint {} of peer \"{}\": routing it into the tunnel would loop; narrow allowed_ips or set interface.routes = false",
                                e, q.name
                            ),
                        ));
                    }
                }
            }
        }
        security::check_unique_keys(&peers)?;
        let config = Config {
            interface,
            coding,
            peers,
            security,
        };
        config.check_engine()?;
        Ok(config)
    }
}

impl RawInterface {
    fn validate(self) -> Result<Interface, ConfigError> {
        let name = self.name.trim().to_string();
        if name.is_empty() || name.len() > 15 {
            return Err(ConfigError::invalid(
                "interface.name",
                format!("'{name}' must be 1 to 15 bytes (Linux IFNAMSIZ)"),
            ));
        }
        if name
            .chars()
            .any(|c| c == '/' || c == '%' || c.is_whitespace() || c == ':')
        {
            return Err(ConfigError::invalid(
                "interface.name",
                format!("'{name}' must not contain '/', '%', ':' or whitespace"),
            ));
        }
        let address = parse_cidr("interface.address", &self.address)?;
        if !address.has_host_bits() && address.prefix < max_prefix(address.addr) {
            return Err(ConfigError::invalid(
                "interface.address",
                format!(
                    "{address} is a network address; give this host's address inside it, e.g. {}/{}",
                    first_host(address.addr),
                    address.prefix
                ),
            ));
        }
        let mtu = self.mtu.unwrap_or(1400);
        if mtu < MIN_MTU {
            return Err(ConfigError::invalid(
                "interface.mtu",
                format!("{mtu} is below the minimum {MIN_MTU}"),
            ));
        }
        let listen = parse_sockaddr("interface.listen", &self.listen)?;
        let path_mtu = self.path_mtu.unwrap_or(1500);
        if path_mtu < MIN_MTU {
            return Err(ConfigError::invalid(
                "interface.path_mtu",
                format!("{path_mtu} is below the minimum {MIN_MTU}"),
            ));
        }
        let queue_packets = self.queue_packets.unwrap_or(4096);
        if queue_packets == 0 {
            return Err(ConfigError::invalid(
                "interface.queue_packets",
                "must be at least 1",
            ));
        }
        let workers = validate_workers(self.workers)?;
        let tun_queues = validate_tun_queues(self.tun_queues)?;
        let stats_file = match self.stats_file {
            Some(s) if s.trim().is_empty() => {
                return Err(ConfigError::invalid(
                    "interface.stats_file",
                    "must not be empty",
                ));
            }
            Some(s) => PathBuf::from(s),
            None => PathBuf::from(format!("/run/tcpnc/{name}.json")),
        };
        Ok(Interface {
            name,
            address,
            mtu,
            listen,
            path_mtu,
            routes: self.routes.unwrap_or(true),
            stats_file,
            queue_packets,
            tun_offload: self.tun_offload.unwrap_or(true),
            udp_gso: self.udp_gso.unwrap_or(true),
            udp_gro: self.udp_gro.unwrap_or(true),
            workers,
            tun_queues,
            operate: Operate::validate(self.metrics_listen, self.log_level)?,
        })
    }
}

impl RawPeer {
    fn validate(
        self,
        i: usize,
        iface: &Interface,
        security: &Security,
    ) -> Result<Peer, ConfigError> {
        let (public_key, preshared_key) = security::peer_keys(i, &self, security)?;
        let endpoint = match &self.endpoint {
            Some(e) => Some(self.check_endpoint(i, e, iface)?),
            None => None,
        };
        let allowed_ips = self.check_allowed_ips(i)?;
        Ok(Peer {
            name: self.name.unwrap_or_else(|| format!("peer{i}")),
            endpoint,
            allowed_ips,
            keepalive_secs: self.keepalive_secs.unwrap_or(0),
            public_key,
            preshared_key,
        })
    }

    fn check_endpoint(
        &self,
        i: usize,
        text: &str,
        iface: &Interface,
    ) -> Result<SocketAddr, ConfigError> {
        let endpoint = parse_sockaddr(&format!("peer[{i}].endpoint"), text)?;
        if endpoint.port() == 0 || endpoint.ip().is_unspecified() {
            return Err(ConfigError::invalid(
                format!("peer[{i}].endpoint"),
                format!("{endpoint} is not a reachable address (unspecified address or port 0)"),
            ));
        }
        let listen_v6_any = iface.listen.is_ipv6() && iface.listen.ip().is_unspecified();
        if endpoint.is_ipv4() != iface.listen.is_ipv4() && !listen_v6_any {
            return Err(ConfigError::invalid(
                format!("peer[{i}].endpoint"),
                format!(
                    "{endpoint} is of another address family than interface.listen {}",
                    iface.listen
                ),
            ));
        }
        Ok(endpoint)
    }

    fn check_allowed_ips(&self, i: usize) -> Result<Vec<Cidr>, ConfigError> {
        if self.allowed_ips.is_empty() {
            return Err(ConfigError::invalid(
                format!("peer[{i}].allowed_ips"),
                "must list at least one prefix",
            ));
        }
        let mut allowed_ips = Vec::with_capacity(self.allowed_ips.len());
        for (k, s) in self.allowed_ips.iter().enumerate() {
            let key = format!("peer[{i}].allowed_ips[{k}]");
            let c = parse_cidr(&key, s)?;
            if c.has_host_bits() {
                return Err(ConfigError::invalid(
                    key,
                    format!(
                        "{c} has host bits set; did you mean {}/{}?",
                        c.network(),
                        c.prefix
                    ),
                ));
            }
            if let Some((m, prev)) = allowed_ips
                .iter()
                .enumerate()
                .find(|(_, p): &(usize, &Cidr)| p.overlaps(&c))
            {
                return Err(ConfigError::invalid(
                    key,
                    format!("{c} overlaps {prev} (allowed_ips[{m}] of the same peer)"),
                ));
            }
            allowed_ips.push(c);
        }
        Ok(allowed_ips)
    }
}
