//! The bench's rig: the gateway's configuration (the same [`RawConfig`] a lab writes), the
//! gateway on a fake TUN and a fake network, and the peer's engine and envelope (with fresh
//! keys on both sides when the options ask for a secure tunnel).

use std::net::SocketAddr;
use std::time::Duration;

use tcpnc_proto::Engine;
use tcpnc_proto::settings::{CodingMode, PolicyOverrides, RedundancyPolicy};

use super::peer::Peer;
use super::tcp::{LOCAL, REMOTE};
use super::{DriverError, DriverOptions};
use crate::config::{Config, RawCoding, RawConfig, RawInterface, RawPeer};
use crate::io::{FakeNet, FakeTunHandle, fake_tun};
use crate::peer_engine::{engine_config, shards_for};
use crate::security::{CipherSetting, Envelope, Security};
use crate::{Gateway, GatewayHandle, GatewayOptions};
use tcpnc_tunnel::Key;

/// The gateway's address on the fake network.
const GATEWAY: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(LOOPBACK), 51_820);
/// The peer's.
const PEER: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(LOOPBACK), 51_821);
const LOOPBACK: std::net::Ipv4Addr = std::net::Ipv4Addr::LOCALHOST;
/// Seed of the peer engine's coefficients (the gateway's engines use `coding.seed`).
const PEER_SEED: u64 = 0x5eed_0f9e_e200;

/// The running gateway and the driver's ends of its devices.
pub(super) struct Rig {
    /// `None` once stopped.
    pub(super) gateway: Option<GatewayHandle>,
    pub(super) tun: FakeTunHandle,
    pub(super) peer: Peer,
}

impl Rig {
    /// Builds the configuration, starts the gateway, makes the peer.
    pub(super) fn start(o: &DriverOptions) -> Result<Rig, DriverError> {
        let keys = Keys::for_options(o)?;
        let config = gateway_config(o, keys.as_ref())?;
        let net = FakeNet::new();
        // A fake socket drops what does not fit, like UDP: room for every flow's whole flight
        // (R + 1 datagrams per segment) so that no datagram is lost on the way.
        let segments = o.flows as u64 * (o.inflight / u64::from(o.mss) + 1);
        let per_segment = o.redundancy.ceil().clamp(1.0, 16.0) as u64 + 1;
        let capacity = (segments * per_segment + 4096).min(1 << 22) as usize;
        let bind = |addr| {
            net.bind(addr, capacity).map_err(|source| DriverError::Io {
                what: "binding a fake socket",
                source,
            })
        };
        let (gateway_udp, peer_udp) = (bind(GATEWAY)?, bind(PEER)?);
        let (tun, handle) = fake_tun();
        let opts = GatewayOptions {
            interface: config.interface.name.clone(),
            mode: config.coding.mode,
            stats_file: None,
            stats_interval: Duration::from_secs(1),
            queue_packets: config.interface.queue_packets,
            security: config.security.clone(),
        };
        let shards = shards_for(&config)?;
        let gateway = Gateway::with_shards(opts, tun, gateway_udp, config.peers.clone(), shards)?;
        let engine = Engine::new(engine_config(&config), PEER_SEED)
            .map_err(|e| DriverError::Engine(e.to_string()))?;
        let envelope = peer_envelope(keys.as_ref())?;
        Ok(Rig {
            gateway: Some(gateway.spawn()),
            tun: handle,
            peer: Peer::new(engine, envelope, peer_udp, GATEWAY),
        })
    }
}

/// A run's secure tunnel: fresh static keys of the gateway and the peer, and the cipher.
pub(super) struct Keys {
    gateway: Key,
    peer: Key,
    cipher: CipherSetting,
}

impl Keys {
    /// Fresh keys when the options ask for a secure tunnel (`cipher`).
    pub(super) fn for_options(o: &DriverOptions) -> Result<Option<Keys>, DriverError> {
        let Some(cipher) = o.cipher else {
            return Ok(None);
        };
        let key = || Key::generate().map_err(|e| DriverError::Envelope(e.to_string()));
        Ok(Some(Keys {
            gateway: key()?,
            peer: key()?,
            cipher,
        }))
    }
}

/// Public half of `k`.
fn public(k: &Key) -> Result<Key, DriverError> {
    k.public().map_err(|e| DriverError::Envelope(e.to_string()))
}

/// The gateway's configuration: the peer at [`PEER`] owning [`REMOTE`], coding as the options
/// say (W and a fixed R in mode nc); `insecure = true`, or with `keys` the gateway's private
/// key, the peer's public key and the cipher.
pub(super) fn gateway_config(
    o: &DriverOptions,
    keys: Option<&Keys>,
) -> Result<Config, DriverError> {
    let coding = match o.mode {
        CodingMode::Nc => {
            let policies = PolicyOverrides {
                window: Some(o.window),
                redundancy: Some(RedundancyPolicy::Fixed(o.redundancy)),
                ..PolicyOverrides::default()
            };
            RawCoding::new(CodingMode::Nc, &policies, None)
        }
        CodingMode::Off => RawCoding::new(CodingMode::Off, &PolicyOverrides::default(), None),
    };
    let raw = RawConfig {
        interface: RawInterface {
            name: "bench".into(),
            address: format!("{LOCAL}/24"),
            listen: GATEWAY.to_string(),
            routes: Some(false),
            workers: Some(o.workers),
            insecure: keys.is_none().then_some(true),
            private_key: keys.map(|k| k.gateway.to_string()),
            cipher: keys.map(|k| k.cipher.to_string()),
            ..Default::default()
        },
        coding,
        peer: vec![RawPeer {
            name: Some("driver".into()),
            endpoint: Some(PEER.to_string()),
            allowed_ips: vec![format!("{REMOTE}/32")],
            keepalive_secs: Some(0),
            public_key: keys
                .map(|k| public(&k.peer))
                .transpose()?
                .map(|k| k.to_string()),
            preshared_key: None,
        }],
    };
    Ok(raw.validate()?)
}

/// The peer's envelope, its one peer the gateway: integrity mode, or with `keys` the peer's
/// private key, the gateway's public key and the cipher.
fn peer_envelope(keys: Option<&Keys>) -> Result<Envelope, DriverError> {
    let gateway = crate::config::Peer {
        name: "gateway".into(),
        endpoint: Some(GATEWAY),
        allowed_ips: Vec::new(),
        keepalive_secs: 0,
        public_key: keys.map(|k| public(&k.gateway)).transpose()?,
        preshared_key: None,
    };
    let security = match keys {
        Some(k) => Security::Keys {
            private: k.peer,
            cipher: k.cipher,
        },
        None => Security::Insecure,
    };
    Envelope::new(&security, &[gateway], Duration::ZERO)
        .map_err(|e| DriverError::Envelope(e.to_string()))
}
