//! The tunnel's security settings of the config file and the envelope the loop uses.
//!
//! Config keys (`docs/gateway.md`): `[interface] private_key` or `private_key_file` (a key as
//! `tcpnc genkey` prints it), or `insecure = true` (no keys: the integrity mode, CRC-32C only,
//! for labs); `[[peer]] public_key` and optional `preshared_key`; with keys, `[interface]
//! cipher` ([`CipherSetting`]). With keys, a peer's `endpoint` is optional: it is learned from
//! the peer's last authenticated datagram (roaming).
//!
//! [`Envelope`] wraps every frame an engine emits and opens every datagram before an engine
//! sees it: [`tcpnc_tunnel::integrity`] or the Noise sessions of [`tcpnc_tunnel::Tunnel`].

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::net::SocketAddr;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use tcpnc_tunnel::outer::{INTEGRITY_OVERHEAD, TRANSPORT_OVERHEAD};
use tcpnc_tunnel::{
    Arrival, Cipher, Drop, DropCounters, Key, Limits, PeerKeys, Timers, Tunnel, TunnelConfig,
    TunnelEvent,
};

use crate::config::{ConfigError, Peer, RawInterface, RawPeer};

/// What `tcpnc up` prints when a config has `insecure = true`.
pub const INSECURE_WARNING: &str = "insecure = true: the tunnel checks integrity (CRC-32C) but has \
     no authentication and no encryption; anyone who can send to it can inject traffic. Use keys \
     (tcpnc genkey) on any path you do not fully control";

/// How the tunnel is protected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Security {
    /// `insecure = true`: frames carry a CRC-32C; peers are recognised by address only.
    Insecure,
    /// Noise IKpsk2 sessions with this static private key.
    Keys {
        /// The private key.
        private: Key,
        /// The cipher of the handshakes this gateway initiates (`interface.cipher`).
        cipher: CipherSetting,
    },
}

/// `[interface] cipher`: the cipher of the handshakes this gateway initiates. A gateway answers
/// a peer's handshake in the peer's cipher whatever this says (the initiator chooses,
/// `tcpnc_tunnel::cipher`), so two gateways with different settings always connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CipherSetting {
    /// `"auto"` (the default): AES-256-GCM where this CPU has AES and carry-less multiply
    /// instructions ([`aes_is_fast`]), ChaCha20-Poly1305 elsewhere.
    #[default]
    Auto,
    /// `"chacha20-poly1305"` or `"aes-256-gcm"`.
    Only(Cipher),
}

impl CipherSetting {
    /// The cipher this gateway initiates with on this CPU.
    pub fn resolve(self) -> Cipher {
        match self {
            CipherSetting::Only(c) => c,
            CipherSetting::Auto if aes_is_fast() => Cipher::Aes256Gcm,
            CipherSetting::Auto => Cipher::ChaCha20Poly1305,
        }
    }
}

impl fmt::Display for CipherSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CipherSetting::Auto => f.write_str("auto"),
            CipherSetting::Only(c) => c.fmt(f),
        }
    }
}

impl FromStr for CipherSetting {
    type Err = String;

    fn from_str(s: &str) -> Result<CipherSetting, String> {
        match s {
            "auto" => Ok(CipherSetting::Auto),
            _ => s.parse().map(CipherSetting::Only).map_err(|_| {
                format!("unknown cipher {s:?} (auto, chacha20-poly1305 or aes-256-gcm)")
            }),
        }
    }
}

/// Whether this CPU runs AES-GCM in hardware (AES-NI, PCLMULQDQ and AVX on x86-64; the AES and
/// PMULL extensions on AArch64): there `ring`'s AES-256-GCM is several times cheaper than its
/// ChaCha20-Poly1305 (docs/speed.md, "The tunnel's cipher"); without them it is slower.
pub fn aes_is_fast() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("aes")
            && std::arch::is_x86_feature_detected!("pclmulqdq")
            && std::arch::is_x86_feature_detected!("avx")
    }
    #[cfg(target_arch = "aarch64")]
    {
        std::arch::is_aarch64_feature_detected!("aes")
            && std::arch::is_aarch64_feature_detected!("pmull")
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

impl Security {
    /// Bytes the envelope adds to every frame (beyond outer IP/UDP).
    pub fn overhead(&self) -> usize {
        match self {
            Security::Insecure => INTEGRITY_OVERHEAD,
            Security::Keys { .. } => TRANSPORT_OVERHEAD,
        }
    }
}

fn key(name: String, text: &str) -> Result<Key, ConfigError> {
    text.parse::<Key>()
        .map_err(|e| ConfigError::invalid(name, e.to_string()))
}

/// `[interface]`'s `insecure`, `private_key`, `private_key_file` and `cipher`.
pub(crate) fn interface_security(raw: &RawInterface) -> Result<Security, ConfigError> {
    let cipher = match raw.cipher.as_deref() {
        None => CipherSetting::default(),
        Some(_) if raw.insecure == Some(true) => {
            return Err(ConfigError::invalid(
                "interface.cipher",
                "needs keys (insecure = true has no cipher)",
            ));
        }
        Some(text) => text
            .parse()
            .map_err(|e: String| ConfigError::invalid("interface.cipher", e))?,
    };
    let file = match &raw.private_key_file {
        Some(path) => Some(std::fs::read_to_string(Path::new(path)).map_err(|e| {
            ConfigError::invalid(
                "interface.private_key_file",
                format!("cannot read {path}: {e}"),
            )
        })?),
        None => None,
    };
    match (raw.insecure.unwrap_or(false), &raw.private_key, file) {
        (true, None, None) => Ok(Security::Insecure),
        (true, _, _) => Err(ConfigError::invalid(
            "interface.insecure",
            "cannot be combined with private_key / private_key_file",
        )),
        (false, Some(_), Some(_)) => Err(ConfigError::invalid(
            "interface.private_key_file",
            "give private_key or private_key_file, not both",
        )),
        (false, Some(k), None) => Ok(Security::Keys {
            private: key("interface.private_key".into(), k)?,
            cipher,
        }),
        (false, None, Some(k)) => Ok(Security::Keys {
            private: key("interface.private_key_file".into(), &k)?,
            cipher,
        }),
        (false, None, None) => Err(ConfigError::invalid(
            "interface.private_key",
            "required (generate one with `tcpnc genkey`); or set insecure = true for a lab \
             without keys (integrity checks only, no authentication)",
        )),
    }
}

/// A peer's `public_key` and `preshared_key`, checked against the interface's security.
pub(crate) fn peer_keys(
    i: usize,
    raw: &RawPeer,
    security: &Security,
) -> Result<(Option<Key>, Option<Key>), ConfigError> {
    match security {
        Security::Insecure => {
            if raw.public_key.is_some() || raw.preshared_key.is_some() {
                return Err(ConfigError::invalid(
                    format!("peer[{i}].public_key"),
                    "keys need interface.private_key (not insecure = true)",
                ));
            }
            if raw.endpoint.is_none() {
                return Err(ConfigError::invalid(
                    format!("peer[{i}].endpoint"),
                    "required with insecure = true (peers are recognised by address)",
                ));
            }
            Ok((None, None))
        }
        Security::Keys { .. } => {
            let public = raw.public_key.as_deref().ok_or_else(|| {
                ConfigError::invalid(
                    format!("peer[{i}].public_key"),
                    "required (the peer's `tcpnc pubkey`)",
                )
            })?;
            let public = key(format!("peer[{i}].public_key"), public)?;
            let psk = match &raw.preshared_key {
                Some(p) => Some(key(format!("peer[{i}].preshared_key"), p)?),
                None => None,
            };
            Ok((Some(public), psk))
        }
    }
}

/// No two peers with the same public key.
pub(crate) fn check_unique_keys(peers: &[Peer]) -> Result<(), ConfigError> {
    for (i, p) in peers.iter().enumerate() {
        if let Some(j) = peers[..i]
            .iter()
            .position(|q| q.public_key.is_some() && q.public_key == p.public_key)
        {
            return Err(ConfigError::invalid(
                format!("peer[{i}].public_key"),
                format!("is also the public key of peer[{j}]"),
            ));
        }
    }
    Ok(())
}

/// Sealing buffers the integrity envelope keeps for reuse at most.
const SPARE_BUFFERS: usize = 1024;

/// What an opened datagram holds.
pub enum Opened {
    /// A frame for peer `.0`'s engine: range `.1` of the datagram given to [`Envelope::open`].
    Frame(usize, std::ops::Range<usize>),
    /// Authenticated, nothing for the engine (handshake, empty keepalive).
    Control(usize),
}

/// The state of integrity mode.
pub struct IntegrityState {
    /// Peer index by configured endpoint.
    by_endpoint: HashMap<SocketAddr, usize>,
    /// Sealed datagrams waiting to be sent.
    out: VecDeque<(usize, Vec<u8>)>,
    /// Buffers of sent datagrams, sealed into again ([`Envelope::recycle`]).
    spare: Vec<Vec<u8>>,
    /// Drops by reason.
    drops: DropCounters,
}

/// The envelope of every datagram (see the module documentation).
pub enum Envelope {
    /// Integrity mode: peers by endpoint, CRC-32C.
    Integrity(Box<IntegrityState>),
    /// Noise sessions.
    Secure(Box<Tunnel>),
}

impl Envelope {
    /// The envelope for `security` and `peers`; `unix_origin` is the Unix time at `now` = 0.
    pub fn new(
        security: &Security,
        peers: &[Peer],
        unix_origin: Duration,
    ) -> Result<Envelope, tcpnc_tunnel::KeyError> {
        match security {
            Security::Insecure => Ok(Envelope::Integrity(Box::new(IntegrityState {
                by_endpoint: peers
                    .iter()
                    .enumerate()
                    .filter_map(|(i, p)| p.endpoint.map(|e| (e, i)))
                    .collect(),
                out: VecDeque::new(),
                spare: Vec::new(),
                drops: DropCounters::default(),
            }))),
            Security::Keys { private, cipher } => {
                let keys = peers
                    .iter()
                    .map(|p| PeerKeys::new(p.public_key.unwrap_or(Key([0; 32])), p.preshared_key))
                    .collect();
                // Index seed and boot id: random per process (a restart is a new boot id).
                let random = Key::generate()?.0;
                let seed = u64::from_le_bytes(random[..8].try_into().unwrap_or_default());
                let boot_id = u64::from_le_bytes(random[8..16].try_into().unwrap_or_default());
                let config = TunnelConfig {
                    private: *private,
                    peers: keys,
                    timers: Timers::default(),
                    limits: Limits::default(),
                    seed,
                    unix_origin,
                    boot_id,
                    cipher: cipher.resolve(),
                };
                Ok(Envelope::Secure(Box::new(Tunnel::new(
                    config,
                    Duration::ZERO,
                )?)))
            }
        }
    }

    /// Opens a datagram from `from` where it is (decrypted in place, so opening copies and
    /// allocates nothing); a frame comes back as its range in `d`. A drop is counted here.
    pub fn open(&mut self, now: Duration, from: SocketAddr, d: &mut [u8]) -> Result<Opened, Drop> {
        match self {
            Envelope::Integrity(st) => {
                let r = match st.by_endpoint.get(&from) {
                    None => Err(Drop::UnknownSource),
                    Some(&i) => {
                        tcpnc_tunnel::integrity::frame_range(d).map(|f| Opened::Frame(i, f))
                    }
                };
                if let Err(e) = &r {
                    st.drops.add(*e);
                }
                r
            }
            Envelope::Secure(t) => match t.receive_in_place(now, from, d)? {
                Arrival::Frame { peer, frame } => Ok(Opened::Frame(peer, frame)),
                Arrival::Control { peer } => Ok(Opened::Control(peer)),
            },
        }
    }

    /// Seals a frame of `peer`'s engine; the datagram(s) come out of [`Envelope::poll_transmit`].
    pub fn seal(&mut self, now: Duration, peer: usize, frame: &[u8]) {
        match self {
            Envelope::Integrity(st) => {
                let mut d = st.spare.pop().unwrap_or_default();
                tcpnc_tunnel::integrity::seal_into(frame, &mut d);
                st.out.push_back((peer, d));
            }
            Envelope::Secure(t) => t.send(now, peer, frame),
        }
    }

    /// Hands back a sent datagram's buffer to be sealed into again (no allocation per sealed
    /// datagram once warm; at most [`SPARE_BUFFERS`] kept).
    pub fn recycle(&mut self, datagram: Vec<u8>) {
        match self {
            Envelope::Integrity(st) => {
                if st.spare.len() < SPARE_BUFFERS {
                    st.spare.push(datagram);
                }
            }
            Envelope::Secure(t) => t.recycle(datagram),
        }
    }

    /// The next datagram to send, with its peer.
    pub fn poll_transmit(&mut self) -> Option<(usize, Vec<u8>)> {
        match self {
            Envelope::Integrity(st) => st.out.pop_front(),
            Envelope::Secure(t) => t.poll_transmit().map(|x| (x.peer, x.datagram)),
        }
    }

    /// The next peer known to have restarted (lost its engine state): its boot id changed.
    pub fn poll_restarted(&mut self) -> Option<usize> {
        match self {
            Envelope::Integrity(_) => None,
            Envelope::Secure(t) => t.poll_event().map(|e| match e {
                TunnelEvent::PeerRestarted { peer } => peer,
            }),
        }
    }

    /// When [`Envelope::handle_timeout`] has work.
    pub fn poll_timeout(&self) -> Option<Duration> {
        match self {
            Envelope::Integrity(_) => None,
            Envelope::Secure(t) => t.poll_timeout(),
        }
    }

    /// Runs the session timers.
    pub fn handle_timeout(&mut self, now: Duration) {
        if let Envelope::Secure(t) = self {
            t.handle_timeout(now);
        }
    }

    /// Whether peers may roam (endpoints learned from authenticated datagrams).
    pub fn roaming(&self) -> bool {
        matches!(self, Envelope::Secure(_))
    }

    /// Counters as `(name, value)` pairs.
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        match self {
            Envelope::Integrity(st) => st.drops.pairs().collect(),
            Envelope::Secure(t) => t.stats().pairs(),
        }
    }

    /// Every drop so far.
    pub fn drops(&self) -> u64 {
        match self {
            Envelope::Integrity(st) => st.drops.total(),
            Envelope::Secure(t) => t.stats().drops.total(),
        }
    }
}
